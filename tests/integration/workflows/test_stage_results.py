"""stage-results.yml executed by act on `/stage-results <run id>`, fed the artifacts the
executed run-sweep.yml produced (the session's ``seed_sweep``, not a fixture), against the
GitHub API double: the run is staged, the reply is edited to success with the run's page,
the store holds every point and both evals, and the report's run page shows them all."""

from __future__ import annotations

import io
import tarfile
import zipfile

import pytest

from infersweep.report import explorerdata
from infersweep.store import open_store
from tests.ghdouble import GitHubDouble
from tests.integration.workflows.conftest import describe
from tests.integration.workflows.staging import (
    ACT_RUN_ID,
    COMMENTER,
    TOKEN,
    artifacts_of,
    run_stage_results,
    serve_run,
)
from tests.integration.workflows.sweep_pr import SEED_POINTS

pytestmark = pytest.mark.integration


def _stage_run(sweep, tmp_path, act, trees, toolcache):
    """`/stage-results 1` on ``sweep``'s pull request: (stage-results' act run, the reply's
    body, the store's URL)."""
    run, pr = sweep
    db_url = f"sqlite:///{tmp_path / 'store.db'}"
    with GitHubDouble(repository=pr.pr.repository, token=TOKEN) as gh:
        serve_run(gh, run, pr)
        stage = run_stage_results(gh, run.sandbox, pr, tmp_path, act=act, trees=trees,
                                  toolcache=toolcache, db_url=db_url)
        (note,) = gh.comments_on(pr.pr.number)
    assert note["edits"] == 1, note  # the acknowledgement, edited to the outcome
    return stage, note["body"], db_url


def test_the_executed_run_is_staged_from_its_own_artifacts(
        seed_sweep, act_executable, action_trees, python_tool_cache, tmp_path):
    assert seed_sweep[0].ok, describe(seed_sweep[0])
    stage, body, db_url = _stage_run(seed_sweep, tmp_path, act_executable, action_trees,
                                     python_tool_cache)
    assert stage.ok, describe(stage)
    assert stage.log.results()["Stage PR results/Stage"] == "success", describe(stage)
    assert stage.log.job("stage").step("stage").outputs.get("staged") == "true"
    assert body.startswith(f"@{COMMENTER} staged [run {ACT_RUN_ID}]"), body
    assert f"{SEED_POINTS} point(s), 2 eval(s)" in body, body
    assert f"runs/{ACT_RUN_ID}-1.html" in body, body
    with open_store(db_url) as store:
        (staged,) = store.staged_runs()
    assert staged.run_id == str(ACT_RUN_ID)
    assert len(staged.points) == SEED_POINTS and len(staged.evals) == 2
    assert sorted(p["conc"] for p in staged.points) == [4, 8, 16, 32, 64, 128, 256, 512, 768,
                                                        1024, 2048]
    # the report the job uploaded for Pages shows the run with every point
    pages = artifacts_of(stage)["github-pages"]
    with zipfile.ZipFile(io.BytesIO(pages)) as zf:
        tar = zf.read("artifact.tar")
    with tarfile.open(fileobj=io.BytesIO(tar)) as site:
        page = site.extractfile(f"./runs/{ACT_RUN_ID}-1.html").read().decode()
        data = site.extractfile(f"./{explorerdata.FILE}").read().decode()
    # the run page draws its points from the site's one data file (report/points.js)
    assert explorerdata.FILE in page and data.startswith(f"window.{explorerdata.GLOBAL} = ")


def test_a_run_with_a_failed_point_is_refused_with_the_point_named(
        failed_sweep, act_executable, action_trees, python_tool_cache, tmp_path):
    run, _ = failed_sweep
    assert run.collect is not None and "results_bmk" in artifacts_of(run), describe(run)
    stage, body, db_url = _stage_run(failed_sweep, tmp_path, act_executable, action_trees,
                                     python_tool_cache)
    assert stage.log.results()["Stage PR results/Stage"] == "failure", describe(stage)
    assert "staged [run" not in body, body
    assert "c=4" in body and "missing" in body, body  # the canary's point, by name
    with open_store(db_url) as store:
        assert store.staged_runs() == []  # nothing half-written
