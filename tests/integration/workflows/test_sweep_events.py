"""run-sweep.yml executed by act for the two other events that start a sweep: the push to
main that merges the changelog entry (the full changelog matrix, no canary, no fail-fast)
and a manual ``workflow_dispatch`` with inputs (a small selection: the seed config, 8k1k,
concurrencies 4 and 256, no evals). Every job that should run runs and passes, and collect's
gate passes on exactly the points asked for.

The sandbox holds main at the commit the event is about and act runs from a clone on main
there (how `infersweep replay` lays out a push or a dispatch).
"""

from __future__ import annotations

import io
import json
import zipfile

import pytest

from infersweep.replay.sandbox import GitSandbox
from tests.integration.workflows.conftest import describe, run_in_sandbox
from tests.integration.workflows.sweep_pr import (
    SEED,
    SEED_POINTS,
    WORKFLOW,
    dispatch_main,
    push_main,
)

# act's own timeouts (1500 s a run) govern, not pytest-timeout's default of 600 s a test
pytestmark = [pytest.mark.integration, pytest.mark.timeout(1800)]

FIRST_JOBS = {"Run Sweep/Decide": "success",
              "Run Sweep/Check configs, pins and changelog": "success",
              "Run Sweep/Build the sweep matrix": "success",
              "Run Sweep/Canary": "skipped",  # no single-node rows
              "Run Sweep/Collect results": "success"}
DISPATCH = {"config-keys": SEED, "seq-lens": "8k1k", "conc": "4 256", "eval-mode": "none"}


def _decision(run) -> dict:
    return json.loads(run.log.job("policy").step("decide").outputs["decision-json"])


def _matrix(run) -> dict[str, list]:
    """The setup job's non-empty job lists (``ref`` aside)."""
    outputs = run.log.job("setup").step("matrix").outputs
    return {k: json.loads(v) for k, v in outputs.items() if k != "ref" and v != "[]"}


def _benchmarks(run) -> dict[str, str | None]:
    """Benchmark job title -> result, for every benchmark job act started."""
    return {key.split("/Benchmark/")[1]: job.result for key, job in run.log.jobs.items()
            if "/Benchmark/" in key}


def _aggregate(run) -> dict:
    """aggregate/results.json of the results_bmk artifact collect uploaded."""
    [folder] = [p for p in run.artifacts() if p.name == "results_bmk"]
    with zipfile.ZipFile(io.BytesIO((folder / "results_bmk.zip").read_bytes())) as zf:
        return json.loads(zf.read("aggregate/results.json"))


def _gate_passed(run, points: list[int]) -> None:
    collect = run.log.job("collect")
    assert not [a for a in collect.annotations if a.level == "error"], describe(run)
    n = len(points)
    assert f"results check: passed, {n} of {n} expected point(s) complete" in collect.summary, \
        collect.summary
    agg = _aggregate(run)
    assert sorted(r["conc"] for r in agg["rows"]) == points
    assert sorted(e["conc"] for e in agg["expected"]) == points
    assert agg["missing"] == [] and agg["unexpected"] == []


def test_the_push_that_merges_the_entry_runs_the_full_changelog_matrix(
        act_executable, action_trees, python_tool_cache, worktree_repo, tmp_path):
    sandbox = GitSandbox(tmp_path / "github")
    push = push_main(worktree_repo[0], sandbox, tmp_path)
    run = run_in_sandbox(sandbox, WORKFLOW, "push", push.event, repo_dir=push.clone,
                         work=tmp_path, act=act_executable, trees=action_trees,
                         toolcache=python_tool_cache, name="push", timeout=1500)
    assert run.ok, describe(run)
    decision = _decision(run)
    assert (decision["event"], decision["mode"], decision["canary"], decision["fail-fast"]) \
        == ("push", "full", False, False), decision
    assert (decision["diff-base"], decision["diff-head"]) == (push.base_sha, push.head_sha)
    results = run.log.results()
    for job, result in {**FIRST_JOBS, "Run Sweep/Canary (multi-node)": "skipped"}.items():
        assert results.get(job) == result, describe(run)
    assert run.log.job("setup").step("matrix").outputs["ref"] == push.head_sha
    matrix = _matrix(run)
    assert list(matrix) == ["multi-1"], matrix  # no canary: both rows in the shard
    assert [r["title"] for r in matrix["multi-1"]] == [
        "dsv4_8k1k atom-disagg 1P1D c4-128 eval", "dsv4_8k1k atom-disagg 2P1D c256-2048 eval"]
    assert _benchmarks(run) == {
        "dsv4_8k1k atom-disagg 1P1D c4-128 eval on mi355x-disagg": "success",
        "dsv4_8k1k atom-disagg 2P1D c256-2048 eval on mi355x-disagg": "success"}, describe(run)
    _gate_passed(run, [4, 8, 16, 32, 64, 128, 256, 512, 768, 1024, 2048])
    assert len(_aggregate(run)["rows"]) == SEED_POINTS
    assert {p.name for p in run.artifacts()} >= {"bmk_multi-node-1_1", "bmk_multi-node-2_1",
                                                 "results_bmk"}


def test_a_manual_dispatch_runs_exactly_the_points_it_asks_for(
        act_executable, action_trees, python_tool_cache, worktree_repo, tmp_path):
    sandbox = GitSandbox(tmp_path / "github")
    dispatch = dispatch_main(worktree_repo[0], sandbox, tmp_path, DISPATCH)
    run = run_in_sandbox(sandbox, WORKFLOW, "workflow_dispatch", dispatch.event,
                         repo_dir=dispatch.clone, work=tmp_path, act=act_executable,
                         trees=action_trees, toolcache=python_tool_cache, name="dispatch",
                         inputs=DISPATCH, timeout=1500)
    assert run.ok, describe(run)
    decision = _decision(run)
    # the recommended primary (the workflow has no sweep-label input): canary first
    assert (decision["event"], decision["primary-label"], decision["canary"],
            decision["stageable"]) == ("workflow_dispatch", "full-sweep-fail-fast", True,
                                       False), decision
    results = run.log.results()
    for job, result in FIRST_JOBS.items():
        assert results.get(job) == result, describe(run)
    # no changelog to check on a dispatch: that step alone is skipped
    check = run.log.job("check")
    skipped = [s.name.split(" --")[0] for s in check.steps
               if s.stage == "Main" and s.result == "skipped"]
    assert skipped == ["infersweep changelog check"], describe(run)
    assert run.log.job("setup").step("matrix").outputs["ref"] == dispatch.head_sha
    matrix = _matrix(run)
    assert {k: [r["title"] for r in v] for k, v in matrix.items()} == {
        "canary-multi-node": ["dsv4_8k1k atom-disagg 1P1D c4"],
        "multi-1": ["dsv4_8k1k atom-disagg 2P1D c256"]}, matrix
    assert _benchmarks(run) == {
        "dsv4_8k1k atom-disagg 1P1D c4 on mi355x-disagg": "success",
        "dsv4_8k1k atom-disagg 2P1D c256 on mi355x-disagg": "success"}, describe(run)
    _gate_passed(run, [4, 256])
    collect = run.log.job("collect")
    assert [s.result for s in collect.steps if s.stage == "Main" and s.name.startswith("Eval")] \
        == ["skipped", "skipped"]  # eval-mode none: no eval folder anywhere
