"""What the local executor derives from a recipe (engines, limits, time limit, environment),
and the normalised job states every executor reports."""

from __future__ import annotations

import pytest

from infersweep.config.catalog import load_catalog
from infersweep.matrix.generate import Selection, generate_keyed
from infersweep.recipe.render import render_row
from infersweep.rowjobs.executor import JobState, normalise_state
from infersweep.rowjobs.local import LocalExecutor, _env, engine_plan, time_limit_seconds
from tests.conftest import FROZEN_MASTER, FROZEN_RUNNERS, REPO
from tests.unit.recipe.conftest import KEY


@pytest.mark.parametrize(("text", "state"), [
    ("COMPLETED", JobState.COMPLETED), ("CANCELLED by 0", JobState.CANCELLED),
    ("CD", JobState.COMPLETED), ("PD", JobState.PENDING), ("completing", JobState.RUNNING),
    ("OUT_OF_ME+", JobState.OUT_OF_MEMORY), ("NODE_FAIL", JobState.NODE_FAIL),
    ("BOOT_FAIL", JobState.NODE_FAIL), ("DEADLINE", JobState.TIMEOUT),
    ("REQUEUED", JobState.PENDING), ("", JobState.UNKNOWN), (None, JobState.UNKNOWN),
    ("WHATEVER", JobState.UNKNOWN),
])
def test_normalise_state(text, state):
    assert normalise_state(text) is state


def test_terminal_states():
    assert {s for s in JobState if s.terminal} == {
        JobState.COMPLETED, JobState.FAILED, JobState.CANCELLED, JobState.TIMEOUT,
        JobState.NODE_FAIL, JobState.OUT_OF_MEMORY, JobState.PREEMPTED}


@pytest.mark.parametrize(("value", "seconds"), [
    ("08:00:00", 8 * 3600), ("30", 30 * 60), ("5:30", 5 * 60 + 30), ("1-00", 24 * 3600),
    ("1-02:03", 26 * 3600 + 3 * 60), ("2-00:00:10", 48 * 3600 + 10), (None, None),
    ("unlimited", None),
])
def test_slurm_time_limits(value, seconds):
    assert time_limit_seconds(value) == seconds


@pytest.fixture(scope="module")
def recipes():
    catalog = load_catalog([FROZEN_MASTER],
                           FROZEN_RUNNERS, strict_runners=False)
    rows = [r for _, r in generate_keyed(catalog, Selection(config_keys=[KEY], evals="none"))]
    return [render_row(r, REPO).recipe for r in rows]


def _flag(args, name):
    return args[args.index(name) + 1]


def test_engines_follow_the_recipe_topology_and_limits(recipes):
    one, two = recipes
    workers, router = engine_plan(one, "deepseek-ai/DeepSeek-V4-Pro")
    assert [w["role"] for w in workers] == ["prefill", "decode"]
    pre, dec = (w["args"] for w in workers)
    assert (_flag(pre, "--max-num-seqs"), _flag(dec, "--max-num-seqs")) == ("256", "128")
    assert _flag(pre, "--max-model-len") == _flag(dec, "--max-model-len") == "9472"
    assert _flag(pre, "--served-model-name") == "deepseek-ai/DeepSeek-V4-Pro"
    assert _flag(router["args"], "--policy") == "round-robin"  # AToMesh's 'random'
    workers, _ = engine_plan(two, "m")
    assert [w["role"] for w in workers] == ["prefill", "prefill", "decode"]
    assert _flag(workers[2]["args"], "--max-num-seqs") == "2048"


def test_aggregated_recipe_runs_one_worker_without_router():
    recipe = {"name": "agg", "resources": {"gpus_per_node": 8, "agg_nodes": 1, "agg_workers": 1},
              "backend": {"atom_config": {"aggregated": {"max-num-seqs": 64}}}}
    workers, router = engine_plan(recipe, "m")
    assert router is None and [w["role"] for w in workers] == ["aggregated"]
    assert _flag(workers[0]["args"], "--max-num-seqs") == "64"
    recipe["resources"]["agg_workers"] = 2  # several: behind the router (test_engine_plan.py)
    workers, router = engine_plan(recipe, "m")
    assert len(workers) == 2 and router is not None


def test_job_environment_is_explicit(monkeypatch):
    monkeypatch.setenv("PYTHONPYCACHEPREFIX", "/leak")
    monkeypatch.setenv("VIRTUAL_ENV", "/leak")
    env = _env({"environment": {"A": 1}}, {"B": "2"})
    assert env["A"] == "1" and env["B"] == "2"
    assert "PYTHONPYCACHEPREFIX" not in env and "VIRTUAL_ENV" not in env


def test_local_render_options_point_into_the_job_folder(tmp_path):
    opts = LocalExecutor().render_options(tmp_path)
    assert opts.result_dir == str((tmp_path / "logs" / "fixed-seq").resolve())
    assert opts.client.endswith(" -m infersweep")
