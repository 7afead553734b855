"""The agentic gates on real exports: an honest run passes; evidence edited *consistently*
(counts recomputed, aggregates rewritten) is still refused, each by its own rule."""

from __future__ import annotations

import json

import pytest

from infersweep.agentic import gate, gatepoints
from tests.unit.agentic import agenticjob


def rules(found) -> set[str]:
    return {d.rule for d in found}


@pytest.fixture
def job(tmp_path):
    folder = tmp_path / "job"
    return folder, agenticjob.make(folder)


def test_honest_scaled_run_passes_as_a_local_run(job):
    folder, path = job
    assert gate.judge(agenticjob.load(path), path, agenticjob.row()) == []
    [entry] = gatepoints.examine([folder])
    assert entry["problems"] == [] and entry["publishable"] is False
    assert gatepoints.point_problems([entry], None) == []


def _add_failures(folder, n: int) -> None:
    """n failed profiling requests in the records and the aggregate export, as aiperf
    writes them (a failed record has no metrics and an error object)."""
    recs = agenticjob.records(folder)
    ok = next(r for r in recs if r["metadata"]["benchmark_phase"] == "profiling")
    for i in range(n):
        t = ok["metadata"]["request_start_ns"] + i
        recs.append({"metadata": {"benchmark_phase": "profiling", "request_start_ns": t,
                                  "request_end_ns": t, "conversation_id": "trace-1"},
                     "metrics": {}, "error": {"code": 500, "type": "Internal Server Error",
                                              "message": "simulated engine failure"}})
    agenticjob.save_records(folder, recs)
    agg_path = folder / "aiperf_artifacts" / "profile_export_aiperf.json"
    agg = agenticjob.load(agg_path)
    agg["error_request_count"] = {"unit": "requests", "avg": float(n)}
    agenticjob.save(agg_path, agg)


def test_error_rate_of_11_percent_with_counts_recomputed_is_refused(job):
    folder, _ = job
    _add_failures(folder, 10)  # 10 / (80 + 10) = 11.1 %
    path = agenticjob.reprocess(folder, agenticjob.row())
    r = agenticjob.load(path)
    assert r["request_accounting"]["error_request_count"] == 10
    found = gate.judge(r, path, agenticjob.row())
    assert rules(found) == {gate.RULE_ERROR_RATE}
    assert "10 of 90 profiling requests failed (11.1%)" in found[0].message


def test_error_rate_of_10_percent_passes(job):
    folder, _ = job
    _add_failures(folder, 8)  # 8 / 88 = 9.1 %
    path = agenticjob.reprocess(folder, agenticjob.row())
    assert gate.judge(agenticjob.load(path), path, agenticjob.row()) == []


def test_errors_hidden_from_the_result_but_in_the_records_are_refused(job):
    folder, path = job
    r = agenticjob.load(path)
    _add_failures(folder, 10)  # the result still says 0 errors
    found = gate.judge(r, path, agenticjob.row())
    assert {gate.RULE_ERROR_RATE, gate.RULE_CONSISTENCY} <= rules(found)


def test_server_metrics_stripped_of_the_engine_family_are_refused(job):
    folder, _ = job
    sm_path = folder / "aiperf_artifacts" / "server_metrics_export.json"
    sm = agenticjob.load(sm_path)
    sm["metrics"] = {k: v for k, v in sm["metrics"].items() if not k.startswith("vllm:")}
    agenticjob.save(sm_path, sm)
    path = agenticjob.reprocess(folder, agenticjob.row())
    found = gate.judge(agenticjob.load(path), path, agenticjob.row())
    assert rules(found) == {gate.RULE_SERVER}
    assert "exposes vllm:* metrics; the scrape has none" in found[0].message
    assert "--enable-metrics" in found[0].hint and "router must expose /metrics" in found[0].hint


def test_no_server_scrape_at_all_is_refused(job):
    folder, _ = job
    (folder / "aiperf_artifacts" / "server_metrics_export.json").unlink()
    path = agenticjob.reprocess(folder, agenticjob.row())
    assert rules(gate.judge(agenticjob.load(path), path, agenticjob.row())) == {gate.RULE_SERVER}


def test_submission_valid_false_without_scaled_is_refused(job):
    folder, _ = job
    path = agenticjob.reprocess(folder, agenticjob.row(), scaled=None)
    found = gate.judge(agenticjob.load(path), path, agenticjob.row())
    assert rules(found) == {gate.RULE_SUBMISSION}
    messages = " ".join(d.message for d in found)
    assert "submission_valid is False" in messages and "ran 40 s" in messages


def test_submission_valid_flipped_true_against_the_export_is_refused(job):
    folder, _ = job
    path = agenticjob.reprocess(folder, agenticjob.row(), scaled=None)
    r = agenticjob.load(path)
    r.update(submission_valid=True, submission_invalid_reasons=[], publishable=True,
             publishable_reason=None, duration={"row": 3600, "run": 3600})
    agenticjob.save(path, r)
    found = gate.judge(r, path, agenticjob.row())
    assert gate.RULE_CONSISTENCY in rules(found)
    assert any("submission_valid says True, the aggregate export says False" in d.message
               for d in found)


def test_throughput_doubled_with_aggregates_recomputed_but_records_untouched_is_refused(job):
    _, path = job
    r = agenticjob.load(path)
    tp = r["request_metrics"]["throughput"]
    for side in ("input", "output", "total"):
        tp[side]["tokens_per_second"] *= 2
    tp["per_gpu"] = {k: v * 2 for k, v in tp["per_gpu"].items()}
    agenticjob.save(path, r)  # every throughput of the result agrees with every other
    found = gate.judge(r, path, agenticjob.row())
    assert rules(found) == {gate.RULE_CONSISTENCY}
    assert len(found) == 6  # input, output, total and the three per-GPU rates
    assert all("(1 % allowed)" in d.message for d in found)


def test_successful_count_inflated_in_result_and_aggregate_is_refused(job):
    folder, path = job
    r = agenticjob.load(path)
    r["num_requests_successful"] = r["request_accounting"]["records_profiled"] = 160
    agenticjob.save(path, r)
    agg_path = folder / "aiperf_artifacts" / "profile_export_aiperf.json"
    agg = agenticjob.load(agg_path)
    agg["request_count"]["avg"] = 160.0
    agenticjob.save(agg_path, agg)
    found = gate.judge(r, path, agenticjob.row())
    assert any("num_requests_successful is 160" in d.message and "holds 80" in d.message
               for d in found)


def test_exports_outside_the_result_folder_are_refused(job):
    _, path = job
    r = agenticjob.load(path)
    r["artifacts"] = "../elsewhere"
    assert rules(gate.judge(r, path)) == {"results-path"}


def test_duplicate_result_for_one_concurrency_is_refused_naming_both_folders(tmp_path):
    a = tmp_path / "run" / "job-a"
    b = tmp_path / "run" / "job-b"
    agenticjob.make(a)
    agenticjob.make(b)
    entries = gatepoints.examine([tmp_path / "run"])
    found = gatepoints.point_problems(entries, None)
    assert [p[0] for p in found] == ["duplicate"]
    assert a.as_posix() in found[0][2] and b.as_posix() in found[0][2]


def test_matrix_point_without_a_result_is_missing_and_an_extra_one_unexpected(tmp_path):
    agenticjob.make(tmp_path / "run" / "job-a")
    entries = gatepoints.examine([tmp_path / "run"])
    matrix = [agenticjob.row(), agenticjob.row(conc=4),
              agenticjob.row() | {"scenario-type": "fixed-seq-len", "isl": 1, "osl": 1}]
    found = gatepoints.point_problems(entries, matrix)
    assert [(p[0], p[1]) for p in found] == [("missing", "agentic dsv4_tp2_conc4_kvnone c=4")]
    assert "job-a" in found[0][2]  # where the row's other results are
    other = [agenticjob.row(tp=4)]
    kinds = sorted(p[0] for p in gatepoints.point_problems(entries, other))
    assert kinds == ["missing", "unexpected"]


def test_a_result_whose_row_beside_it_differs_is_refused(job):
    folder, _ = job
    (folder / "row.json").write_text(json.dumps(agenticjob.row(tp=4, conc=2)))
    [entry] = gatepoints.examine([folder])
    assert any("recipe_fingerprint" in p["message"] for p in entry["problems"])


def test_results_check_judges_a_run_folder_of_agentic_results(tmp_path, capsys):
    from infersweep.cli import main

    run = tmp_path / "run"
    agenticjob.make(run / "job-a")
    main(["results", "check", str(run)])
    assert "1 of them local agentic runs" in capsys.readouterr().out
    agenticjob.make(run / "job-b")
    with pytest.raises(SystemExit):
        main(["results", "check", str(run)])
    out = capsys.readouterr().out
    assert "duplicate" in out and "job-a" in out and "job-b" in out
    matrix = tmp_path / "matrix.json"
    matrix.write_text(json.dumps([agenticjob.row(), agenticjob.row(conc=8)]))
    with pytest.raises(SystemExit):
        main(["results", "check", str(run / "job-a"), "--matrix", str(matrix)])
    assert "dsv4_tp2_conc8_kvnone c=8: missing" in capsys.readouterr().out
