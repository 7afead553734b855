"""run-sweep.yml executed by act when benchmark points fail, job by job: the failing row's
benchmark job is red, collect's gate fails naming every point it lacks (the failed one at its
manifest, as a located ``::error``), and a failed canary stops the shards under
full-sweep-fail-fast but not under full-sweep-enabled.

The fault is the simulator's: INFERSWEEP_SIM_ARGS=--fail-rate 1 (every simulated engine of
the local executor answers HTTP 500), so every point of every benchmark job fails; the
canary (1P1D c4) is the first benchmark job to run.

What act 0.2.89 does after a failure (read in its runner, seen in these runs): a failed
*plain* job does not end the run, later jobs are started or skipped by their ``if`` as on
GitHub; a failed *called* workflow (every benchmark job here: ``uses:
./.github/workflows/benchmark.yml``) does: the caller job returns the nested run's error,
act's stage pipeline stops at it, and no later job is started or even logged as skipped,
``if: always()`` included. So:

- the failed run itself (``failed_sweep``) stops after the canary; its collect job is then
  run alone (a one-job copy of the real job, its ``needs.setup.outputs.ref`` the run's own)
  over the same artifact folder;
- the shard decision is run with the canary's call inlined into a plain job (the called
  job's steps, ``inputs.*`` read as the caller's ``with:``), every other job as committed, so
  act goes on to evaluate the shards' real ``if`` after the canary failed.
"""

from __future__ import annotations

import io
import json
import re
import zipfile

import pytest

from infersweep.replay.sandbox import GitSandbox
from tests.integration.workflows.conftest import FAIL_EVERY_REQUEST, describe, run_in_sandbox
from tests.integration.workflows.sweep_pr import (
    WORKFLOW,
    inline_calls,
    load_workflow,
    open_pr,
)

# act's own timeouts (1500 s a run) govern, not pytest-timeout's default of 600 s a test
pytestmark = [pytest.mark.integration, pytest.mark.timeout(3600)]

CANARY = "Canary (multi-node)/Benchmark/dsv4_8k1k atom-disagg 1P1D c4 on mi355x-disagg"
CANARY_ARTIFACT = "bmk_canary-multi-node-1_1"
# the job folder is named by the row's catalog key (config-key), not its exp-name
CANARY_MANIFEST = ("results/bmk_canary-multi-node-1_1/dsv4-fp4-mi355x-atom-disagg/"
                   "mi355x-atom-dsv4-disagg-1p1d-tp8-8k1k/manifest.json")
SHARD_POINTS = [8, 16, 32, 64, 128, 256, 512, 768, 1024, 2048]  # the multi-1 shard's rows
BEFORE_BENCHMARKS = {"Run Sweep/Decide": "success",
                     "Run Sweep/Check configs, pins and changelog": "success",
                     "Run Sweep/Build the sweep matrix": "success"}
MISSING = re.compile(r"c=(\d+): the matrix asks for this point; no job of the run has it")


def _main_step(job, name: str):
    hits = [s for s in job.steps if s.stage == "Main" and s.name == name]
    assert len(hits) == 1, f"{job.key}: steps named {name!r}: {[s.name for s in job.steps]}"
    return hits[0]


def _failed_steps(job) -> list[str]:
    return [s.name for s in job.steps if s.result == "failure"]


def _zip(run, name: str) -> zipfile.ZipFile:
    [folder] = [p for p in run.artifacts() if p.name == name]
    return zipfile.ZipFile(io.BytesIO((folder / f"{name}.zip").read_bytes()))


def _gate_errors(job) -> list:
    return [a for a in job.annotations if a.level == "error" and a.step == "Results check"]


def _missing_points(errors) -> list[int]:
    return sorted(int(m.group(1)) for a in errors if (m := MISSING.search(a.message)))


# -- the run that failed: the canary's job, act's stop, collect run alone --------------------

def test_the_failing_rows_benchmark_job_is_red_and_still_uploads_its_job_folder(failed_sweep):
    run, pr = failed_sweep
    assert not run.ok, describe(run)
    results = run.log.results()
    for job, result in BEFORE_BENCHMARKS.items():
        assert results.get(job) == result, describe(run)
    canary = run.log.jobs[CANARY]
    assert canary.result == "failure", describe(run)
    assert _failed_steps(canary) == ["Launch"], describe(run)
    assert _main_step(canary, "Upload results").result == "success"  # if: always()
    assert "point c=4 missing" in "\n".join(canary.output), describe(run)
    # the job folder it uploaded says which point failed and why
    with _zip(run, CANARY_ARTIFACT) as zf:
        manifest = json.loads(zf.read(CANARY_MANIFEST.split("/", 2)[2]))
    assert manifest["provenance"]["job-state"] == "FAILED"
    assert [(p["conc"], p["status"]) for p in manifest["points"]] == [(4, "missing")]
    assert manifest["complete"] is False
    assert run.log.job("setup").step("matrix").outputs["ref"] == pr.head_sha


def test_act_ends_the_run_at_the_failed_called_workflow(failed_sweep):
    """act 0.2.89, not GitHub: after the canary's called workflow failed, no shard job and
    not collect (``if: always() && needs.setup.result == 'success'``) is started or logged."""
    run, _ = failed_sweep
    later = [k for k in run.log.jobs if "shard" in k or k.endswith("/Collect results")]
    assert later == [], sorted(run.log.jobs)
    assert any(line.startswith("Error: Job ") and line.endswith(" failed")
               for line in run.log.unparsed), run.log.unparsed[-5:]


def test_collect_run_alone_fails_the_gate_naming_the_failed_point_at_its_manifest(failed_sweep):
    run, _ = failed_sweep
    collect = run.collect
    assert collect is not None, describe(run)
    job = collect.log.job("collect")
    assert job.result == "failure", describe(collect)
    assert _main_step(job, "Collect").result == "success", describe(collect)  # --allow-empty
    assert _failed_steps(job) == ["Results check"], describe(collect)
    errors = _gate_errors(job)
    # the failed point: located at the manifest of the job folder that should hold it
    [point] = [a for a in errors if "c=4:" in a.message]
    assert point.file == CANARY_MANIFEST, point
    assert point.title == "results check: missing", point
    assert "the job ended FAILED" in point.message, point
    [ended] = [a for a in errors if a.title == "results check: job"]
    assert ended.file == CANARY_MANIFEST and "ended FAILED" in ended.message, ended
    # the shard's points no job ran are named from the run's matrix (no file to point at)
    assert _missing_points(errors) == SHARD_POINTS, [str(a) for a in errors]
    assert len(errors) == len(SHARD_POINTS) + 2, [str(a) for a in errors]
    assert "results check: FAILED, 0 of 11 expected point(s) complete" in job.summary
    # the eval steps had nothing to read; results_bmk is uploaded anyway (if: always())
    assert _main_step(job, "Eval check").result == "skipped"
    with _zip(run, "results_bmk") as zf:
        assert point.file in zf.namelist()
        assert "sweep-rows/sweep-rows.json" in zf.namelist()
    names = {p.name for p in run.artifacts()}
    assert names == {"sweep-rows", "changelog-metadata", CANARY_ARTIFACT, "results_bmk"}, names


# -- the canary's failure and the shards: fail-fast or not ----------------------------------

def _sweep_with_failing_canary(label, worktree_repo, act, trees, toolcache, work):
    """The seed PR under ``label``, every point failing, run-sweep.yml with the canary's call
    inlined (act then evaluates the shards after it failed); returns the run."""
    sandbox = GitSandbox(work / "github")
    pr = open_pr(worktree_repo[0], sandbox, work, label=label)
    workflow = pr.pr.clone / WORKFLOW
    derived = inline_calls(workflow, pr.pr.clone, ["canary-multi-node"],
                           work / "derived" / "run-sweep.yml")
    real, copy = load_workflow(workflow)["jobs"], load_workflow(derived)["jobs"]
    assert {k: v for k, v in copy.items() if k != "canary-multi-node"} == \
        {k: v for k, v in real.items() if k != "canary-multi-node"}
    assert copy["canary-multi-node"]["if"] == real["canary-multi-node"]["if"]
    assert copy["canary-multi-node"]["strategy"] == real["canary-multi-node"]["strategy"]
    return run_in_sandbox(sandbox, derived, "pull_request", pr.event, repo_dir=pr.pr.clone,
                          work=work, act=act, trees=trees, toolcache=toolcache,
                          name=label, env={"INFERSWEEP_SIM_ARGS": FAIL_EVERY_REQUEST},
                          timeout=1500)


def _shard_jobs(run):
    """(the multi-1 caller rows, the benchmark jobs they started)."""
    rows = [j for j in run.log.jobs.values() if j.job_id == "multi-1"]
    started = [j for k, j in run.log.jobs.items() if k.startswith("Multi-node shard 1-")
               and "/Benchmark/" in k]
    return rows, started


def _canary_failed(run):
    results = run.log.results()
    for job, result in BEFORE_BENCHMARKS.items():
        assert results.get(job) == result, describe(run)
    canary = run.log.job("canary-multi-node")
    assert canary.result == "failure", describe(run)
    assert _failed_steps(canary) == ["Launch"], describe(run)


def test_a_failed_canary_stops_the_shards_under_full_sweep_fail_fast(
        act_executable, action_trees, python_tool_cache, worktree_repo, tmp_path):
    run = _sweep_with_failing_canary("full-sweep-fail-fast", worktree_repo, act_executable,
                                     action_trees, python_tool_cache, tmp_path)
    assert run.log.job("policy").step("decide").outputs["fail-fast"] == "true"
    _canary_failed(run)
    rows, started = _shard_jobs(run)
    assert len(rows) == 2 and {j.result for j in rows} == {"skipped"}, describe(run)
    assert started == [], describe(run)
    # collect still runs (if: always()) and its gate names every point the shard never ran
    collect = run.log.job("collect")
    assert collect.result == "failure", describe(run)
    assert _failed_steps(collect) == ["Results check"], describe(run)
    errors = _gate_errors(collect)
    assert _missing_points(errors) == SHARD_POINTS, [str(a) for a in errors]
    [point] = [a for a in errors if "c=4:" in a.message]
    assert point.file == CANARY_MANIFEST, point


def test_a_failed_canary_does_not_stop_the_shards_under_full_sweep_enabled(
        act_executable, action_trees, python_tool_cache, worktree_repo, tmp_path):
    run = _sweep_with_failing_canary("full-sweep-enabled", worktree_repo, act_executable,
                                     action_trees, python_tool_cache, tmp_path)
    assert run.log.job("policy").step("decide").outputs["fail-fast"] == "false"
    _canary_failed(run)
    rows, started = _shard_jobs(run)
    assert len(rows) == 2 and "skipped" not in {j.result for j in rows}, describe(run)
    titles = sorted(k.split("/Benchmark/")[1] for k in (j.key for j in started))
    assert titles == ["dsv4_8k1k atom-disagg 1P1D c8-128 eval on mi355x-disagg",
                      "dsv4_8k1k atom-disagg 2P1D c256-2048 eval on mi355x-disagg"], \
        describe(run)
    # they ran their launch, and every point failed there too
    assert all(_failed_steps(j) == ["Launch"] for j in started), describe(run)
