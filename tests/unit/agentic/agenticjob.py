"""A job folder made from the real, trimmed replay exports under tests/data/agentic/exports:
``row.json``, the exports in ``aiperf_artifacts/`` and the result ``agentic process`` writes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from infersweep.agentic import result

EXPORTS = Path(__file__).resolve().parents[2] / "data" / "agentic" / "exports"
SCALED = {"duration": {"original": 3600, "run": 40.0},
          "warmup_requests_per_lane": {"original": 10, "run": 1}}


def row(framework: str = "vllm", conc=2, tp: int = 2, **extra) -> dict:
    return {"image": "vllm/vllm-openai:v0.11.0", "model": "deepseek-ai/DeepSeek-V4-Pro",
            "model-prefix": "dsv4", "precision": "fp4", "framework": framework,
            "runner": "cluster:b200-dgxc", "tp": tp, "pp": 1, "dcp-size": 1, "pcp-size": 1,
            "ep": 1, "dp-attn": False, "spec-decoding": "none", "conc": conc,
            "kv-offloading": "none", "total-cpu-dram-gb": 0, "duration": 3600,
            "exp-name": f"dsv4_tp{tp}_conc{conc}_kvnone", "scenario-type": "agentic-coding",
            "run-eval": False, **extra}


def make(folder: Path, *, exports: str = "vllm-c2", matrix_row: dict | None = None,
         scaled: dict | None = SCALED, name: str = "dsv4-c2") -> Path:
    """A job folder with one processed result; the result file's path."""
    folder.mkdir(parents=True, exist_ok=True)
    art = folder / "aiperf_artifacts"
    if not art.exists():
        shutil.copytree(EXPORTS / exports, art)
    r = matrix_row or row()
    (folder / "row.json").write_text(json.dumps(r))
    return reprocess(folder, r, scaled, name)


def reprocess(folder: Path, r: dict, scaled: dict | None = SCALED,
              name: str = "dsv4-c2") -> Path:
    """Process the folder's exports again (after they were edited: counts recomputed)."""
    out = folder / f"{name}{result.SUFFIX}"
    data = result.process(folder / "aiperf_artifacts", r, framework=r["framework"],
                          gpus=result.row_gpus(r), scaled=scaled)
    result.write(data, out, folder / "aiperf_artifacts")
    return out


def load(path: Path) -> dict:
    return json.loads(path.read_text())


def save(path: Path, data) -> None:
    path.write_text(json.dumps(data, indent=1))


def records(folder: Path) -> list[dict]:
    lines = (folder / "aiperf_artifacts" / "profile_export.jsonl").read_text().splitlines()
    return [json.loads(x) for x in lines if x.strip()]


def save_records(folder: Path, recs: list[dict]) -> None:
    (folder / "aiperf_artifacts" / "profile_export.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in recs))
