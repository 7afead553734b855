"""`store ingest` gates what it stores as `/stage-results` does: an eval that fails `eval
check` (for its job's row, never for the model prefix it claims) refuses the ingest, an eval
the aggregate names without its folder is never stored, and two job folders with different
rows for one point, run and attempt are refused, both named. Each forgery is built
consistently: scores, digests, token counts and the aggregates recomputed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from infersweep.evals import collect as evalcollect
from infersweep.results import collect as collecting
from tests import resultsrun
from tests.integration.stage import stagerun as sr

pytestmark = pytest.mark.integration

RUN = "33825304569"
WRONG = 132  # 0.8999: under dsv4's 0.91, over the 0.85 default


def _artifacts(tmp: Path, *, wrong: int = 0, provenance: dict | None = None,
               copy: dict | None = None, with_eval_folder: bool = True) -> Path:
    """A results_bmk folder as the collect job uploads it: job folders, the eval in its job
    folder, both aggregates rebuilt from them."""
    row = sr.matrix_row()
    bmk = tmp / "artifacts" / "results_bmk"
    job = resultsrun.write_job(bmk / "results", row, run_id=RUN).parent
    if copy is not None:
        resultsrun.write_job(bmk / "results" / "zz-copy", row, run_id=RUN, results=copy)
    sr.write_eval(job / "eval", row, RUN, dataset=tmp / "gsm8k" / "test.jsonl", wrong=wrong,
                  provenance=provenance)
    g = collecting.gather([str(bmk / "results")], allow_incomplete=True)
    (bmk / "aggregate").mkdir()
    (bmk / "aggregate" / "results.json").write_bytes(
        collecting.to_json(collecting.aggregate(g)))
    (bmk / "aggregate" / "evals.json").write_text(json.dumps(
        evalcollect.collect([str(bmk / "results")])))
    if not with_eval_folder:
        for f in (job / "eval").iterdir():
            f.unlink()
        (job / "eval").rmdir()
    return bmk


def _ingest(run_cli, tmp: Path, folder: Path):
    return run_cli("store", "ingest", folder, "--db", f"sqlite:///{tmp / 'store.db'}",
                   "--thresholds", sr.thresholds_file(tmp))


def _nothing_stored(tmp: Path) -> None:
    assert not (tmp / "store.db").exists()  # refused before the store's file is created


def test_an_eval_that_passes_is_stored(run_cli, tmp_path):
    code, out, err = _ingest(run_cli, tmp_path, _artifacts(tmp_path))
    assert code == 0, err
    assert "2 point(s) inserted" in out and "1 eval(s) inserted" in out, out


def test_an_eval_under_its_rows_threshold_refuses_the_ingest(run_cli, tmp_path):
    code, out, err = _ingest(run_cli, tmp_path, _artifacts(tmp_path, wrong=WRONG))
    assert code == 1 and "Traceback" not in err
    assert "[store-eval-gate]" in err and "below the threshold 0.91" in err, err
    _nothing_stored(tmp_path)


def test_an_eval_relabelled_to_a_lower_threshold_refuses_the_ingest(run_cli, tmp_path):
    code, out, err = _ingest(run_cli, tmp_path, _artifacts(
        tmp_path, wrong=WRONG, provenance={"model-prefix": "zz-unknown"}))
    assert code == 1 and "Traceback" not in err
    assert "[eval-provenance]" in err and "'zz-unknown'" in err and "'dsv4'" in err, err
    _nothing_stored(tmp_path)


def test_an_eval_the_aggregate_names_without_its_folder_is_refused(run_cli, tmp_path):
    code, out, err = _ingest(run_cli, tmp_path, _artifacts(tmp_path, wrong=WRONG,
                                                           with_eval_folder=False))
    assert code == 1 and "Traceback" not in err
    assert "evals.json" in err and "no eval folder below holds" in err, err
    _nothing_stored(tmp_path)


def test_a_second_job_folder_with_other_numbers_refuses_the_ingest(run_cli, tmp_path):
    doubled = {c: resultsrun.result(c, c, output_throughput=12000.0,
                                    total_token_throughput=48000.0) for c in (4, 8)}
    code, out, err = _ingest(run_cli, tmp_path, _artifacts(tmp_path, copy=doubled))
    assert code == 1 and "Traceback" not in err
    assert "[results-duplicate-point]" in err and "two job folders hold run" in err, err
    assert "zz-copy/dsv4-fp4-mi355x-atom-disagg/" in err, err
    _nothing_stored(tmp_path)


def test_an_aggregate_edited_against_its_job_folders_refuses_the_ingest(run_cli, tmp_path):
    bmk = _artifacts(tmp_path)
    path = bmk / "aggregate" / "results.json"
    agg = json.loads(path.read_text())
    for r in agg["rows"]:  # every throughput doubled, as a consistent forger would
        for k in ("tput_per_gpu", "output_tput_per_gpu", "input_tput_per_gpu",
                  "output_throughput", "total_token_throughput", "total_output_tokens",
                  "total_input_tokens"):
            r[k] *= 2
    path.write_text(json.dumps(agg))
    code, out, err = _ingest(run_cli, tmp_path, bmk)
    assert code == 1 and "Traceback" not in err
    assert "[results-duplicate-point]" in err, err
    _nothing_stored(tmp_path)
