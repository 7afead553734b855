"""Four staged runs of the seed config for the compare page's tests, read by the real results
code from run folders with their recipe.yaml:

- runs 101, 102 and 103 (a day apart) run the same recipe (fingerprint and text but for the
  job's folder); their numbers differ a little (the noise);
- run 104 runs the 1P1D topology with a new image and ``max-num-seqs`` (a new fingerprint and
  recipe), its concurrency-4 point 30 % slower (a regression), concurrency 32 dropped
  (removed) and the 2P1D topology at 512 added;
- changelog: run 102 carries entry "bump" (so it is not new at 104, which carries it again)
  and run 104 carries "mooncake" too.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from tests import reportruns
from tests.resultsrun import IMAGE

NEW_IMAGE = "rocm/atom-dev:nightly_202611010000"
BUMP = {"config-keys": [reportruns.KEY], "description": ["Bump the ATOM image."],
        "pr-link": "https://github.com/o/r/pull/7"}
MOONCAKE = {"config-keys": [reportruns.KEY], "description": ["Mooncake over TCP for 1P1D."],
            "pr-link": "https://github.com/o/r/pull/9"}
RUN_IDS = ("101", "102", "103", "104")
SLOW = 0.7


def recipe_text(job: Path, image: str, max_seqs: int) -> str:
    """A recipe as a local job writes it: its own folder inside the benchmark command."""
    return (f"name: {job.name}\nmodel:\n  path: hf:deepseek-ai/DeepSeek-V4-Pro\n"
            f"  container: {image}\n  precision: fp4\nbackend:\n  type: atom\n"
            f"  atom_config:\n    decode:\n      max-num-seqs: {max_seqs}\n"
            "benchmark:\n  type: custom\n  command: |\n"
            f"    mkdir -p {job}/logs/fixed-seq\n"
            "    python3 -m infersweep bench serve --max-concurrency 4 "
            f"--result-dir {job}/logs/fixed-seq\n")


def _new_recipe(root: Path) -> None:
    """Run 104's 1P1D job: a new image in its row (so a new fingerprint), manifest and recipe,
    and its concurrency-4 point slower."""
    job = root / reportruns.KEY / reportruns.ONE
    row = json.loads((job / "row.json").read_text())
    (job / "row.json").write_text(json.dumps({**row, "image": NEW_IMAGE}))
    manifest = json.loads((job / "manifest.json").read_text())
    manifest["provenance"]["image"] = NEW_IMAGE
    (job / "manifest.json").write_text(json.dumps(manifest))
    (job / "recipe.yaml").write_text(recipe_text(job, NEW_IMAGE, 256))
    result = job / "logs" / "fixed-seq" / f"{reportruns.ONE}-c4.json"
    data = json.loads(result.read_text())
    for k in ("total_token_throughput", "output_throughput", "total_input_tokens",
              "total_output_tokens"):
        data[k] = round(data[k] * SLOW) if k.startswith("total_") and k.endswith("tokens") \
            else data[k] * SLOW
    result.write_text(json.dumps(data))


def write(root: Path) -> list:
    """The four staged runs, oldest first (see the module docstring)."""
    from infersweep.report import fromrun

    runs = []
    for i, rid in enumerate(RUN_IDS):
        last = rid == RUN_IDS[-1]
        changelog = ({"base_ref": "main", "head_ref": f"pr-{rid}",
                      "entries": [BUMP, MOONCAKE] if last else [BUMP]}
                     if rid in ("102", "104") else None)
        folder = reportruns.write_run(
            root / rid, rid, seed=i, changelog=changelog,
            concs_one=(4, 8, 16) if last else (4, 8, 16, 32),
            concs_two=(64, 128, 256, 512) if last else (64, 128, 256))
        for name in (reportruns.ONE, reportruns.TWO):
            job = folder / reportruns.KEY / name
            (job / "recipe.yaml").write_text(recipe_text(job, IMAGE, 128))
        if last:
            _new_recipe(folder)
        day = f"2026-12-{i + 1:02d}T10:00:00Z"
        runs.append(dataclasses.replace(fromrun.load(folder), staged_at=day, created_at=day))
    return runs
