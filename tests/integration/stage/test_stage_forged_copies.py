"""/stage-results on evidence forged consistently (every count, digest, score and aggregate
recomputed): an eval relabelled to a model prefix with a lower threshold, and a second job
folder for the same point, run and attempt with other numbers. Both are refused and
nothing is stored."""

from __future__ import annotations

import pytest

from infersweep.changelog.buckets import recipe_fingerprint
from tests import resultsrun
from tests.integration.stage import stagerun as sr

pytestmark = pytest.mark.integration

WRONG = 132  # 1,187 of 1,319 right: 0.8999, under dsv4's 0.91, over the 0.85 default


def _stage(gh, tmp_path, run_cli, **bmk):
    s = sr.sweep(gh, tmp_path)
    s.add_run(artifacts={"results_bmk": sr.results_bmk(tmp_path, s.row, **bmk),
                         "changelog-metadata": sr.changelog_zip(),
                         "sweep-rows": sr.rows_zip([s.row])})
    code, out, err = sr.stage(run_cli, gh, tmp_path, f"/stage-results {sr.RUN}")
    (note,) = gh.comments_on(sr.PR)
    return code, out + err, note["body"]


def _nothing_stored(tmp_path, run_cli):
    code, out, err = run_cli("store", "list", "--db", f"sqlite:///{tmp_path / 'store.db'}")
    assert "no staged runs" in out or "there is no results store here yet" in err, out + err


def test_an_eval_under_its_rows_threshold_is_refused(gh, tmp_path, run_cli):
    code, out, body = _stage(gh, tmp_path, run_cli, eval_wrong=WRONG)
    assert code == 1 and "Traceback" not in out
    assert "is not stageable" in body and "0.91" in body, body
    _nothing_stored(tmp_path, run_cli)


def test_an_eval_relabelled_to_another_model_prefix_is_refused(gh, tmp_path, run_cli):
    # the provenance says zz-unknown (threshold 0.85 by default); its fingerprint still
    # names the dsv4 row of the matrix, whose threshold is 0.91
    code, out, body = _stage(gh, tmp_path, run_cli, eval_wrong=WRONG,
                             eval_provenance={"model-prefix": "zz-unknown"})
    assert code == 1 and "Traceback" not in out
    assert "[eval-provenance]" in body and "'zz-unknown'" in body and "'dsv4'" in body, body
    _nothing_stored(tmp_path, run_cli)


def test_an_eval_relabelled_with_its_fingerprint_recomputed_is_refused(gh, tmp_path, run_cli):
    relabelled = {**sr.matrix_row(), "model-prefix": "zz-unknown"}
    code, out, body = _stage(gh, tmp_path, run_cli, eval_wrong=WRONG,
                             eval_provenance={"model-prefix": "zz-unknown",
                                              "recipe-fingerprint":
                                                  recipe_fingerprint(relabelled)})
    assert code == 1 and "Traceback" not in out
    assert "[eval-provenance]" in body and "is no row of the run's jobs" in body, body
    _nothing_stored(tmp_path, run_cli)


def test_a_second_job_folder_with_other_numbers_is_refused_naming_both(gh, tmp_path, run_cli):
    # the copy sorts last, so the rerun rule used to keep it: twice the throughput, every
    # token count and rate of the client result recomputed from it
    doubled = {c: resultsrun.result(c, c, output_throughput=12000.0,
                                    total_token_throughput=48000.0) for c in (4, 8)}
    code, out, body = _stage(gh, tmp_path, run_cli, extra_job=("zz-copy", doubled))
    assert code == 1 and "Traceback" not in out
    assert "two job folders hold run" in body, body
    assert "results/zz-copy/dsv4-fp4-mi355x-atom-disagg/" in body, body
    assert "results/dsv4-fp4-mi355x-atom-disagg/" in body, body
    _nothing_stored(tmp_path, run_cli)


def test_a_second_job_folder_with_the_same_numbers_is_one_measurement(gh, tmp_path, run_cli):
    same = {c: resultsrun.result(c, c) for c in (4, 8)}
    code, out, body = _stage(gh, tmp_path, run_cli, extra_job=("zz-copy", same))
    assert code == 0, body + out
    assert "staged [run" in body
