"""`/stage-results` on a sweep with an agentic-coding row, through the GitHub API double: its
two artifacts (``bmk_agentic_<name>``: row and result; ``agentic_<name>``: the replay's
exports) are rebuilt into one job folder, judged by the agentic gates against the run's
matrix, stored and listed in the reply; a tampered result, missing exports, or an exports
artifact that would replace the result refuse the run and store nothing."""

from __future__ import annotations

import json
import shutil

import pytest

from infersweep.store import open_store
from tests.integration.stage import stagerun as sr
from tests.unit.agentic import agenticjob
from tests.unit.store import agentic_data as ad

pytestmark = pytest.mark.integration

NAME = "agentic-r2_1"


def _job(tmp):
    job = tmp / "agentic-job"
    ad.local_job(job)
    return job, json.loads((job / "row.json").read_text())


def _artifacts(tmp, job, row, *, exports=True) -> dict[str, bytes]:
    results = tmp / "bmk-agentic"
    results.mkdir()
    for name in ("row.json", "dsv4-c2.agentic.json"):
        shutil.copy(job / name, results / name)
    s_row = sr.matrix_row()
    arts = {"results_bmk": sr.results_bmk(tmp, s_row, run_id=str(sr.RUN)),
            "changelog-metadata": sr.changelog_zip(),
            "sweep-rows": sr.rows_zip([s_row, row]),
            f"bmk_agentic_{NAME}": sr.zip_folder(results)}
    if exports:
        spool = tmp / "agentic-exports"
        shutil.copytree(job / "aiperf_artifacts", spool / "aiperf_artifacts")
        arts[f"agentic_{NAME}"] = sr.zip_folder(spool)
    return arts


def _stage(run_cli, gh, tmp):
    code, out, err = sr.stage(run_cli, gh, tmp, f"/stage-results {sr.RUN}")
    assert "Traceback" not in out + err
    (note,) = gh.comments_on(sr.PR)
    return code, note["body"], out + err


def _stored(tmp):
    with open_store(f"sqlite:///{tmp / 'store.db'}") as s:
        return s.agentic_points() if s.revision else []


def test_an_agentic_run_is_gated_stored_and_reported(gh, tmp_path, run_cli):
    s = sr.sweep(gh, tmp_path)
    job, row = _job(tmp_path)
    s.add_run(artifacts=_artifacts(tmp_path, job, row))
    code, body, log = _stage(run_cli, gh, tmp_path)
    assert code == 0, body + log
    assert "2 point(s), 1 agentic result(s), 1 eval(s)" in body
    assert "3 of 3 expected point(s) complete, 1 of them local agentic runs" in body
    assert "### Agentic coding" in body and "**no — local, not publishable**" in body
    (stored,) = _stored(tmp_path)
    assert (stored["conc"], stored["publishable"], stored["scaled"]) == (2, False, True)
    assert stored["result_file"] == f"agentic/{NAME}/dsv4-c2.agentic.json"
    page = (tmp_path / "site" / "agentic.html").read_text()
    assert "local, not publishable" in page and 'id="chart-0"' in page
    assert 'href="agentic.html"' in (tmp_path / "site" / "index.html").read_text()


def test_a_consistently_tampered_result_is_refused(gh, tmp_path, run_cli):
    s = sr.sweep(gh, tmp_path)
    job, row = _job(tmp_path)
    path = job / "dsv4-c2.agentic.json"
    data = agenticjob.load(path)  # doubled throughput, every figure that derives from it too
    tp = data["request_metrics"]["throughput"]
    for side in ("input", "output", "total"):
        tp[side]["tokens_per_second"] *= 2
    for k in tp["per_gpu"]:
        tp["per_gpu"][k] *= 2
    agenticjob.save(path, data)
    s.add_run(artifacts=_artifacts(tmp_path, job, row))
    code, body, _ = _stage(run_cli, gh, tmp_path)
    assert code == 1
    assert "is not stageable" in body and "[agentic-consistency]" in body
    assert _stored(tmp_path) == []


def test_results_without_their_exports_are_refused(gh, tmp_path, run_cli):
    s = sr.sweep(gh, tmp_path)
    job, row = _job(tmp_path)
    s.add_run(artifacts=_artifacts(tmp_path, job, row, exports=False))
    code, body, _ = _stage(run_cli, gh, tmp_path)
    assert code == 1 and "is not stageable" in body and "unusable" in body
    assert _stored(tmp_path) == []


def test_an_agentic_point_of_the_matrix_with_no_artifact_is_missing(gh, tmp_path, run_cli):
    s = sr.sweep(gh, tmp_path)
    job, row = _job(tmp_path)
    arts = _artifacts(tmp_path, job, row)
    del arts[f"bmk_agentic_{NAME}"], arts[f"agentic_{NAME}"]
    s.add_run(artifacts=arts)
    code, body, _ = _stage(run_cli, gh, tmp_path)
    assert code == 1 and "missing" in body and "no agentic result has it" in body


def test_exports_that_would_replace_the_result_are_refused(gh, tmp_path, run_cli):
    s = sr.sweep(gh, tmp_path)
    job, row = _job(tmp_path)
    arts = _artifacts(tmp_path, job, row)
    forged = tmp_path / "forged"
    shutil.copytree(job / "aiperf_artifacts", forged / "aiperf_artifacts")
    shutil.copy(job / "dsv4-c2.agentic.json", forged / "dsv4-c2.agentic.json")
    arts[f"agentic_{NAME}"] = sr.zip_folder(forged)
    s.add_run(artifacts=arts)
    code, body, _ = _stage(run_cli, gh, tmp_path)
    assert code == 1 and "[stage-artifact-name]" in body and "in both artifacts" in body
    assert _stored(tmp_path) == []
