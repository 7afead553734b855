"""run-sweep.yml executed by act for a pull request labeled full-sweep-fail-fast that appends
a changelog entry selecting the seed config: policy, check, setup, the canary, the shard and
collect, through the local fleet (runners/launch_local.sh: the launcher on the local
executor), and collect's gate passing with every expected point and both evals.

The run's artifacts are kept for the session (``seed_sweep``): the staging test feeds them
to `/stage-results`.
"""

from __future__ import annotations

import json

import pytest

from tests.integration.workflows.conftest import describe
from tests.integration.workflows.sweep_pr import RUNNER_LABELS, SEED_POINTS, WORKFLOW

pytestmark = pytest.mark.integration

JOBS = {"Run Sweep/Decide": "success",
        "Run Sweep/Check configs, pins and changelog": "success",
        "Run Sweep/Build the sweep matrix": "success",
        "Run Sweep/Collect results": "success"}


def test_a_labeled_pr_runs_every_point_and_passes_the_gate(seed_sweep):
    run, pr = seed_sweep
    assert run.ok, describe(run)
    results = run.log.results()
    for job, result in JOBS.items():
        assert results.get(job) == result, describe(run)
    benchmarks = {k: v for k, v in results.items() if "Benchmark/" in k or "benchmark" in k}
    assert len(benchmarks) == 3 and set(benchmarks.values()) == {"success"}, results
    setup = run.log.job("setup").step("matrix").outputs
    assert setup["ref"] == pr.head_sha  # one commit for the whole run
    canary = json.loads(setup["canary-multi-node"])
    assert [e["id"] for e in canary] == ["canary-multi-node-1"]
    assert canary[0]["timeout-minutes"] == 570  # the launcher's deadline plus the job's own
    shard = json.loads(setup["multi-1"])
    assert [e["title"] for e in shard] == ["dsv4_8k1k atom-disagg 1P1D c8-128 eval",
                                           "dsv4_8k1k atom-disagg 2P1D c256-2048 eval"]
    # collect's own gate ran on the run's matrix and passed with every point
    collect = run.log.job("collect")
    assert not [a for a in collect.annotations if a.level == "error"], describe(run)
    text = "\n".join(collect.output)
    assert f"{SEED_POINTS} of {SEED_POINTS}" in text or f"{SEED_POINTS}/{SEED_POINTS}" in text, \
        text[-3000:]


def test_the_run_leaves_one_artifact_per_job_and_the_stageable_bundle(seed_sweep):
    run, _ = seed_sweep
    names = {p.name for p in run.artifacts()}
    assert {"sweep-rows", "changelog-metadata", "results_bmk"} <= names, names
    assert {n for n in names if n.startswith("bmk_")} == {
        "bmk_canary-multi-node-1_1", "bmk_multi-node-1_1", "bmk_multi-node-2_1"}, names


__all__ = ["RUNNER_LABELS", "WORKFLOW"]
