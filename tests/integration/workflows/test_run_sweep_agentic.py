"""run-sweep.yml executed by act for a pull request whose changelog entry names an
agentic-coding config: its one row goes to an agentic shard job (no canary), the launcher
replays it with the pinned client on the local fleet at a scaled-down duration, the job
uploads the agentic pair (bmk_agentic_<id>, agentic_<id>) instead of its whole folder, and
collect joins the pair and its gate passes.

Kept to one row at one concurrency (each replay point costs one to two minutes here): the
base commit adds the config with one search-space entry at conc 4, which the local fleet
replays at its scale-down (40: a 90 s window); the config's GSM8K eval is folded into the
row and runs after the replay, as the sandbox's other sweeps run theirs.
"""

from __future__ import annotations

import json
import zipfile

import pytest

from infersweep.replay.sandbox import GitSandbox
from tests.agenticclient import VENV_ENV, client_venv
from tests.integration.workflows.conftest import describe, run_in_sandbox

pytestmark = pytest.mark.integration

KEY = "dsv4-fp4-mi355x-sglang-agentic"
RUNNER = "cluster:mi355x-amds"  # an agentic row runs on an exact cluster label
ROW_ID = "single-node-agentic-1"
ENTRY = f"""
{KEY}:
  image: lmsysorg/sglang:v0.5.9-rocm700-mi35x
  model: deepseek-ai/DeepSeek-V4-Pro
  model-prefix: dsv4
  precision: fp4
  framework: sglang
  runner: {RUNNER}
  multinode: false
  scenarios:
    agentic-coding:
    - dram-utilization: 0.80
      search-space:
      - {{ tp: 8, ep: 1, dp-attn: false, kv-offloading: none, conc-list: [4] }}
"""


def _base_files(source, sandbox) -> dict[str, str]:
    master = (source / "configs" / "amd-master.yaml").read_text()
    assert f"\n{KEY}:" not in master, "the frozen catalog has the config already"
    return {"configs/amd-master.yaml": master.rstrip("\n") + "\n" + ENTRY}


@pytest.fixture(scope="module")
def agentic_sweep(act_executable, action_trees, python_tool_cache, worktree_repo,
                  tmp_path_factory):
    from tests.integration.workflows.sweep_pr import RUNNER_LABELS, WORKFLOW, open_pr

    venv = client_venv()  # skips unless the replay client is installed (or required)
    work = tmp_path_factory.mktemp("agentic-sweep")
    sandbox = GitSandbox(work / "github")
    pr = open_pr(worktree_repo[0], sandbox, work, keys=(KEY,), base_files=_base_files)
    run = run_in_sandbox(sandbox, WORKFLOW, "pull_request", pr.event, repo_dir=pr.pr.clone,
                         work=work, act=act_executable, trees=action_trees,
                         toolcache=python_tool_cache, name="agentic", timeout=1500,
                         env={VENV_ENV: str(venv)}, runner_labels=(*RUNNER_LABELS, RUNNER))
    return run, pr


def _files(artifact) -> set[str]:
    """The files of an artifact act stored (``<name>/<name>.zip``)."""
    with zipfile.ZipFile(artifact / f"{artifact.name}.zip") as z:
        return {n for n in z.namelist() if not n.endswith("/")}


def _unpack(artifact, dest):
    with zipfile.ZipFile(artifact / f"{artifact.name}.zip") as z:
        z.extractall(dest)
    return dest


def _staged(arts, thresholds, work):
    """What /stage-results concludes of the run (its gate, infersweep/stage/gates.py), over
    the artifacts unpacked as it unpacks them: each agentic pair into one job folder."""
    from infersweep.stage import gates

    job = _unpack(arts[f"bmk_agentic_{ROW_ID}_1"], work / "agentic" / f"{ROW_ID}_1")
    spool = _unpack(arts[f"agentic_{ROW_ID}_1"], work / "exports")
    for path in sorted(p for p in spool.rglob("*") if p.is_file()):
        target = job / path.relative_to(spool)
        assert not target.exists(), target
        target.parent.mkdir(parents=True, exist_ok=True)
        path.rename(target)
    return gates.judge(_unpack(arts["results_bmk"], work / "results_bmk"),
                       gates.matrix_rows(_unpack(arts["sweep-rows"], work / "sweep-rows")),
                       thresholds, "1", agentic_dirs=[job])


def test_an_agentic_row_runs_in_its_own_job_and_passes_the_gate(agentic_sweep, tmp_path):
    run, pr = agentic_sweep
    assert run.ok, describe(run)
    setup = run.log.job("setup").step("matrix").outputs
    assert json.loads(setup["canary-single-node"]) == []  # agentic rows are never canaries
    assert json.loads(setup["canary-multi-node"]) == []
    [entry] = json.loads(setup["agentic-1"])
    assert entry["id"] == ROW_ID and entry["runner"] == RUNNER
    assert entry["title"] == "dsv4 sglang tp8 agentic c4 eval"
    # from the row's duration and its one point (InferenceX: 500 for every agentic job)
    assert 0 < entry["timeout-minutes"] < 500
    assert all(json.loads(setup[k]) == [] for k in setup
               if k not in ("agentic-1", "ref") and k.startswith(("single-", "multi-",
                                                                  "agentic-")))
    results = run.log.results()
    benchmarks = {k: v for k, v in results.items() if "/Benchmark/" in k}
    assert list(benchmarks.values()) == ["success"], results
    assert [k for k in results if "Benchmark (single-node)/" in k][0].endswith(ROW_ID)
    # the pair instead of the whole folder
    arts = {p.name: p for p in run.artifacts()}
    assert {n for n in arts if n.startswith(("bmk_", "agentic_"))} == {
        f"bmk_agentic_{ROW_ID}_1", f"agentic_{ROW_ID}_1"}, sorted(arts)
    results_files = _files(arts[f"bmk_agentic_{ROW_ID}_1"])
    export_files = _files(arts[f"agentic_{ROW_ID}_1"])
    assert not results_files & export_files
    assert [f for f in results_files if f.endswith("-c4.agentic.json")], results_files
    assert any(f.endswith("/manifest.json") for f in results_files)
    assert any(f.endswith("/aiperf/profile_export.jsonl") for f in export_files), export_files
    assert not [f for f in export_files | results_files
                if f.rsplit("/", 1)[-1] in ("inputs.json", "profile_export_raw.jsonl")]
    # collect: the pair joined, the gate judged the agentic point and passed
    collect = run.log.job("collect")
    assert not [a for a in collect.annotations if a.level == "error"], describe(run)
    text = "\n".join(collect.output)
    assert "1 agentic job folder(s) in results/agentic" in text, text[-3000:]
    assert "passed, 1 of 1 expected point(s) complete" in text, text[-3000:]
    assert "local agentic run" in text  # scaled down: judged, never publishable
    bmk = _unpack(arts["results_bmk"], tmp_path / "bmk")
    aggregate = json.loads((bmk / "aggregate" / "results.json").read_text())
    assert [e["result"]["conc"] for e in aggregate["agentic"]] == [4]
    # /stage-results takes the run: the pair rebuilt, judged, the aggregate agreeing
    verdict = _staged(arts, pr.pr.clone / "configs" / "eval-thresholds.yaml", tmp_path / "s")
    assert verdict.passed, verdict.problems
    assert [e["result"]["conc"] for e in verdict.agentic] == [4]
