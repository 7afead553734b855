"""`recipe coverage` on InferenceX's two catalogs against upstream srt-slurm v1.0.68: which
fixed-seq-len rows render, and what the real srtctl's dry run says of each rendered recipe.

The figures are those recorded in docs/compatibility.md ("Every row of InferenceX's catalogs
against upstream srt-slurm"); a change in the renderer that moves one shows up here.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections import Counter

import pytest

from infersweep.recipe import coverage, overrides, srtctl
from infersweep.yamldoc import load_yaml
from tests.integration.recipe_coverage.conftest import CATALOGS, CONFIGS, RUNNERS

pytestmark = pytest.mark.integration

REFUSED_NVIDIA = {"recipe file not found": 164, "CONFIG_FILE is not recipes/<path>": 3,
                  "multi-node: no CONFIG_FILE": 2, "CONFIG_FILE selector problem": 1}
REFUSED_AMD: dict[str, int] = {}  # every AMD row renders


@pytest.fixture(scope="module")
def report(upstream_checkout, upstream_srtctl, run_cli_module):
    t0 = time.monotonic()
    code, out, err = run_cli_module(
        "recipe", "coverage", "--config-files", *CATALOGS, "--runner-config", RUNNERS,
        "--srtctl", upstream_checkout, "--format", "json", "--no-progress")
    assert code == 0, err
    doc = json.loads(out)
    print(f"recipe coverage of both catalogs: {time.monotonic() - t0:.1f} s "
          f"({doc['seconds']})")
    return doc


@pytest.fixture(scope="module")
def run_cli_module():
    """The CLI in-process, for a module-scoped fixture (run_cli is per test)."""
    import contextlib
    import io

    from infersweep.cli import main

    def run(*args):
        out, err = io.StringIO(), io.StringIO()
        code = 0
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                main([str(a) for a in args])
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 1
        return code, out.getvalue(), err.getvalue()

    return run


def test_every_fixed_seq_len_row_is_rendered_or_refused_with_its_reason(report):
    s = report["summary"]
    assert s["rows"] == 768 + 306
    assert s["rendered"] == 904 and s["rendered-by-source"] == {
        "srt-slurm": 178, "framework-default": 673, "template": 53}
    singles = [r for r in report["rows"] if r["outcome"] == "rendered"
               and r["source"] != "srt-slurm" and not r["framework"].endswith("-disagg")]
    assert len(singles) == 690  # every single-node row
    # AMD's disaggregated SGLang and ATOM rows name no recipe: their framework defaults
    # render them
    for framework in ("sglang-disagg", "atom-disagg"):
        assert {r["config-file"] for r in report["rows"] if r["framework"] == framework} == {
            f"benchmarks/multi_node/srt-slurm/defaults/{framework}.yaml"}
    assert s["refused"] == dict(Counter(REFUSED_NVIDIA) + Counter(REFUSED_AMD))
    assert report["other-scenarios"] == {"agentic-coding": 746}
    missing = report["refusals"]["recipe file not found"]
    assert (len(missing), sum(missing.values())) == (160, 164)  # recipes, rows
    assert all(path.startswith("recipes/") for path in missing)


def test_srtctl_accepts_every_rendered_recipe(report, upstream_checkout):
    s = report["summary"]
    # every recipe of a dialect upstream speaks is taken; ATOM's (the fork's) is not tried
    assert (s["accepted"], s["rejected"], s["not-dry-run"]) == (792, 0, 112)
    assert report["srtctl"]["commit"] == report["srt-slurm"]["commit"]
    assert report["srtctl"]["backends"] == ["mocker", "sglang", "trtllm", "vllm"]
    rendered = [r for r in report["rows"] if r["outcome"] == "rendered"]
    assert Counter(r["framework"] for r in rendered if r["source"] == "srt-slurm") == {
        "dynamo-trt": 136, "dynamo-sglang": 42}
    assert Counter(r["framework"] for r in rendered if r.get("dry-run") == "accepted"
                   and r["source"] != "srt-slurm") == {"sglang": 343, "vllm": 133, "trt": 104,
                                                       "sglang-disagg": 34}
    assert {r["framework"] for r in rendered if r.get("dry-run") == "not-dry-run"} == {"atom", "atom-disagg"}
    # the override-file rows: five selectors, each one variant
    selected = {r["config-file"] for r in rendered if ":" in r["config-file"]}
    assert len(selected) == 5


@pytest.fixture(scope="module")
def fallback_report(upstream_checkout, upstream_srtctl, run_cli_module):
    code, out, err = run_cli_module(
        "recipe", "coverage", "--config-files", *CATALOGS, "--runner-config", RUNNERS,
        "--srtctl", upstream_checkout, "--format", "json", "--no-progress",
        "--missing-recipe", "framework-default")
    assert code == 0, err
    return json.loads(out)


def test_a_framework_default_may_stand_in_for_a_missing_recipe(fallback_report):
    """--missing-recipe framework-default: the rows naming a recipe that exists nowhere render
    with their framework's disaggregated default, marked as such, and srtctl takes them."""
    s = fallback_report["summary"]
    assert s["rendered"] == 1058 and s["rendered-by-source"] == {
        "srt-slurm": 178, "framework-default": 673, "template": 53,
        "framework-default-for-missing": 154}
    assert (s["accepted"], s["rejected"], s["not-dry-run"]) == (946, 0, 112)
    assert s["refused"] == {"unknown setting": 9, "multi-node: no CONFIG_FILE": 2,
                            "CONFIG_FILE is not recipes/<path>": 3,
                            "CONFIG_FILE selector problem": 1, "[schema]": 1}
    stand_ins = [r for r in fallback_report["rows"]
                 if r.get("source") == "framework-default-for-missing"]
    assert all(r["replaces"].startswith("recipes/") and r["config-file"].startswith(
        "benchmarks/multi_node/srt-slurm/defaults/") for r in stand_ins)
    assert Counter(r["framework"] for r in stand_ins) == {
        "dynamo-sglang": 82, "dynamo-trt": 44, "dynamo-vllm": 28}
    # the rows whose vLLM recipes fake MTP acceptance are still refused: a default cannot
    assert fallback_report["refusals"]["unknown setting"] == {
        "SYNTHETIC_ACCEPTANCE, SYNTHETIC_ACCEPTANCE_LENGTH": 9}


def test_each_catalog_alone(report):
    keys = {key for key, _ in coverage.catalog_rows([CONFIGS / "amd-master.yaml"], RUNNERS)[0]}
    rows = report["rows"]
    amd = Counter(r.get("reason") or "rendered" for r in rows if r["config-key"] in keys)
    nvidia = Counter(r.get("reason") or "rendered" for r in rows if r["config-key"] not in keys)
    assert amd == {**REFUSED_AMD, "rendered": 306}
    assert nvidia == {**REFUSED_NVIDIA, "rendered": 598}


def test_srtctl_rejects_a_recipe_it_cannot_load_and_says_why(report, upstream_srtctl,
                                                             upstream_checkout):
    from infersweep.recipe.rendered import dump

    good = (upstream_checkout / "recipes" / "qwen3-32b" / "disagg-kv-sglang.yaml").read_text()
    data = load_yaml(upstream_checkout / "recipes" / "qwen3-32b" / "disagg-kv-sglang.yaml").data
    data["benchmark"] = {"type": "custom", "command": "true", "bogus": 1}
    bad = dump(data)
    data["benchmark"] = {"type": "custom", "command": "true"}
    data["backend"]["type"] = "atom"
    atom = dump(data)
    got = srtctl.dry_run(upstream_srtctl, [good, bad, good, atom], jobs=2)
    assert [v.accepted for v in got] == [True, False, True, False]
    assert got[1].message == "{'benchmark': {'bogus': ['Unknown field.']}}"
    assert got[3].message.startswith("{'backend': [\"Unknown backend type: 'atom'.")


_ORACLE = """
import json, sys, yaml
from srtctl.core.config import generate_override_configs
out = {}
for path, selectors in json.load(sys.stdin).items():
    raw = yaml.safe_load(open(path))
    for sel in selectors:
        out[f"{path}:{sel}"] = [[s, d] for s, d in generate_override_configs(raw, sel or None)]
print(json.dumps(out, default=str))
"""


def test_override_files_expand_as_srtctl_expands_them(upstream_checkout, upstream_srtctl):
    """Every override file of upstream's recipes/, with every selector that names a variant
    or a group, expanded by srtctl's own code and by ours."""
    files = sorted(p for p in (upstream_checkout / "recipes").rglob("*.yaml")
                   if overrides.is_override_file(load_yaml(p).data))
    assert len(files) == 10
    asked: dict[str, list[str]] = {}
    ours: dict[str, list] = {}
    for path in files:
        data = load_yaml(path).data
        selectors = ["", "base"]
        for key in data:
            if key.startswith(overrides.OVERRIDE):
                selectors.append(key)
            elif key.startswith(overrides.ZIP):
                n = overrides.zip_length(key, data[key])
                selectors += [key, *(f"{key}[{i}]" for i in range(n))]
        selectors.append("*_*")
        asked[str(path)] = selectors
        for sel in selectors:
            ours[f"{path}:{sel}"] = [[v.suffix, v.data]
                                     for v in overrides.variants(data, sel or None)]
    p = subprocess.run([str(upstream_srtctl.exe.parent / "python"), "-c", _ORACLE],
                       input=json.dumps(asked), capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    theirs = json.loads(p.stdout)
    assert sum(len(v) for v in theirs.values()) > 100
    assert json.loads(json.dumps(ours, default=str)) == theirs
