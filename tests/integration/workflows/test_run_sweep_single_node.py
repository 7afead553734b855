"""run-sweep.yml executed by act for a pull request whose entry selects a single-node config:
its rows go through benchmark-single-node.yml and the same launcher as multi-node rows, the
points that start the same server run as one job (one engine start), the canary is the
cheapest point split off that job, and collect's gate passes with every point and the eval.

The config (vLLM, the framework default template) is added to the base commit so that the
run stays small: three points of 8k/1k, TP8.
"""

from __future__ import annotations

import json

import pytest

from infersweep.replay.sandbox import GitSandbox
from tests.integration.workflows.conftest import describe, run_in_sandbox

pytestmark = pytest.mark.integration

KEY = "dsv4-fp4-mi355x-vllm"
ENTRY = f"""
{KEY}:
  image: vllm/vllm-openai:v0.11.0-rocm
  model: deepseek-ai/DeepSeek-V4-Pro
  model-prefix: dsv4
  precision: fp4
  framework: vllm
  runner: mi355x
  multinode: false
  scenarios:
    fixed-seq-len:
    - isl: 8192
      osl: 1024
      search-space:
      - {{ tp: 8, ep: 1, dp-attn: false, conc-list: [4, 8, 16] }}
"""


def _config(source, sandbox) -> dict[str, str]:
    master = (source / "configs" / "amd-master.yaml").read_text()
    return {"configs/amd-master.yaml": master.rstrip("\n") + "\n" + ENTRY}


@pytest.fixture(scope="module")
def single_sweep(act_executable, action_trees, python_tool_cache, worktree_repo,
                 tmp_path_factory):
    from tests.integration.workflows.sweep_pr import WORKFLOW, open_pr

    work = tmp_path_factory.mktemp("single-sweep")
    sandbox = GitSandbox(work / "github")
    pr = open_pr(worktree_repo[0], sandbox, work, keys=(KEY,), base_files=_config)
    run = run_in_sandbox(sandbox, WORKFLOW, "pull_request", pr.event, repo_dir=pr.pr.clone,
                         work=work, act=act_executable, trees=action_trees,
                         toolcache=python_tool_cache, name="single", timeout=1200)
    return run, pr


def test_single_node_rows_run_grouped_through_their_workflow(single_sweep):
    run, _ = single_sweep
    assert run.ok, describe(run)
    results = run.log.results()
    # both rows went through the single-node workflow (its job is named by the row id; act
    # records no result for that middle job) into benchmark.yml's steps
    middle = {k for k in results if "Benchmark (single-node)/" in k}
    assert {k.rsplit("/", 1)[1] for k in middle} == {"canary-single-node-1", "single-node-1"}
    benchmarks = {k: v for k, v in results.items() if "/Benchmark/" in k}
    assert len(benchmarks) == 2 and set(benchmarks.values()) == {"success"}, results
    setup = run.log.job("setup").step("matrix").outputs
    canary = json.loads(setup["canary-single-node"])
    shard = json.loads(setup["single-1"])
    assert [e["id"] for e in canary] == ["canary-single-node-1"]
    assert json.loads(setup["canary-multi-node"]) == []
    # 8 and 16 start the same server: one job, its title shows both points and the eval
    assert [e["title"] for e in shard] == ["dsv4 vllm tp8 8k1k c8,16 eval"], shard
    collect = run.log.job("collect")
    assert not [a for a in collect.annotations if a.level == "error"], describe(run)
    text = "\n".join(collect.output)
    assert "3 of 3" in text or "3/3" in text, text[-3000:]
    names = {p.name for p in run.artifacts()}
    assert {n for n in names if n.startswith("bmk_")} == {
        "bmk_canary-single-node-1_1", "bmk_single-node-1_1"}, names


def test_an_evals_only_pull_request_runs_gates_and_stages_its_eval(
        act_executable, action_trees, python_tool_cache, worktree_repo, tmp_path_factory):
    """The same entry on a pull request labeled full-sweep-fail-fast and evals-only: its one
    eval row (c16, no throughput row to run after) launches alone on the local fleet, collect
    gates it (the matrix asks it for its eval, not for points), and `/stage-results` stores
    the eval and no point."""
    from infersweep.store import open_store
    from tests.ghdouble import GitHubDouble
    from tests.integration.workflows.staging import (
        ACT_RUN_ID,
        COMMENTER,
        TOKEN,
        run_stage_results,
        serve_run,
    )
    from tests.integration.workflows.sweep_pr import WORKFLOW, open_pr

    work = tmp_path_factory.mktemp("evals-only-sweep")
    sandbox = GitSandbox(work / "github")
    labels = ("full-sweep-fail-fast", "evals-only")
    pr = open_pr(worktree_repo[0], sandbox, work, keys=(KEY,), base_files=_config,
                 label=labels[1], labels=labels[:1])
    run = run_in_sandbox(sandbox, WORKFLOW, "pull_request", pr.event, repo_dir=pr.pr.clone,
                         work=work, act=act_executable, trees=action_trees,
                         toolcache=python_tool_cache, name="evals-only", timeout=1200)
    assert run.ok, describe(run)
    setup = run.log.job("setup").step("matrix").outputs
    assert json.loads(setup["canary-single-node"]) == []  # no throughput point, no canary
    assert [e["title"] for e in json.loads(setup["single-1"])] == ["dsv4 vllm tp8 8k1k c16 eval"]
    benchmarks = {k: v for k, v in run.log.results().items() if "/Benchmark/" in k}
    assert list(benchmarks.values()) == ["success"], run.log.results()
    collect = run.log.job("collect")
    assert not [a for a in collect.annotations if a.level == "error"], describe(run)
    text = "\n".join(collect.output)
    assert "results check: passed" in text and "PASS" in text, text[-3000:]

    db_url = f"sqlite:///{work / 'store.db'}"
    with GitHubDouble(repository=pr.pr.repository, token=TOKEN) as gh:
        serve_run(gh, run, pr, labels=labels)
        stage = run_stage_results(gh, sandbox, pr, work, act=act_executable,
                                  trees=action_trees, toolcache=python_tool_cache,
                                  db_url=db_url)
        (note,) = gh.comments_on(pr.pr.number)
    assert stage.ok, describe(stage)
    assert note["body"].startswith(f"@{COMMENTER} staged [run {ACT_RUN_ID}]"), note["body"]
    assert "0 point(s), 1 eval(s)" in note["body"], note["body"]
    with open_store(db_url) as store:
        (staged,) = store.staged_runs()
    assert staged.points == [] and [e["task"] for e in staged.evals] == ["gsm8k"]
