"""Collection order and the rerun rule, the staging gate's verdicts, comparison."""

from __future__ import annotations

import json

from infersweep.config.schema import validate_data
from infersweep.results import check, collect, compare
from tests import resultsrun


def _agg(*paths):
    g = collect.gather(paths, allow_incomplete=True)
    return collect.aggregate(g), g


def test_newest_successful_attempt_wins_and_records_what_it_replaced(tmp_path):
    row = resultsrun.disagg_row([4, 8])
    short = resultsrun.result(8, 8, completed=7, failed=1)
    resultsrun.write_job(tmp_path / "try1", row, results={8: short}, attempt=1)
    resultsrun.write_job(tmp_path / "try2", row, attempt=2)
    # a third attempt that failed again must not beat the successful second one
    resultsrun.write_job(tmp_path / "try3", row, attempt=3, results={8: short})
    agg, _ = _agg(tmp_path / "try3", tmp_path / "try1", tmp_path / "try2")
    assert [r["conc"] for r in agg["rows"]] == [4, 8]
    c8 = agg["rows"][1]
    assert c8["attempt"] == 2 and c8["successful"] is True
    assert sorted((x["attempt"], x["successful"]) for x in c8["replaced"]) == [
        (1, False), (3, False)]
    assert validate_data(agg, "results-aggregate") == []


def test_order_does_not_depend_on_argument_or_file_order(tmp_path):
    a = resultsrun.disagg_row([128, 4, 16])
    resultsrun.write_job(tmp_path, a, name="b-recipe")
    resultsrun.write_job(tmp_path, a, name="a-recipe")
    one, _ = _agg(tmp_path / "dsv4-fp4-mi355x-atom-disagg" / "b-recipe",
                  tmp_path / "dsv4-fp4-mi355x-atom-disagg" / "a-recipe")
    two, _ = _agg(tmp_path)
    keys = [(r["recipe_name"], r["conc"]) for r in one["rows"]]
    assert keys == [(r["recipe_name"], r["conc"]) for r in two["rows"]]
    assert keys == [("a-recipe", 4), ("a-recipe", 16), ("a-recipe", 128),
                    ("b-recipe", 4), ("b-recipe", 16), ("b-recipe", 128)]
    assert collect.to_csv(one).splitlines()[1].startswith("dsv4-fp4-mi355x-atom-disagg,a-recipe,")


def test_aggregate_round_trips_through_collect(tmp_path):
    resultsrun.write_job(tmp_path / "run", resultsrun.disagg_row([4, 8]))
    agg, _ = _agg(tmp_path / "run")
    (tmp_path / "agg.json").write_text(json.dumps(agg))
    again, _ = _agg(tmp_path / "agg.json")
    assert again["rows"] == agg["rows"] and again["expected"] == agg["expected"]


def _problems(*paths, **kw):
    agg, g = _agg(*paths)
    return check.check(agg, errors=g.errors, **kw)


def test_check_passes_a_complete_run(tmp_path):
    resultsrun.write_job(tmp_path, resultsrun.disagg_row([4, 8, 16]))
    problems, counts = _problems(tmp_path)
    assert problems == [] and counts["complete"] == counts["expected"] == 3


def test_check_names_every_missing_short_failed_unexpected_and_identity_problem(tmp_path):
    row = resultsrun.disagg_row([4, 8, 16, 32])
    results = {8: resultsrun.result(8, 8, completed=6), 16: resultsrun.result(16, 16, failed=2),
               32: resultsrun.result(32, 32)}
    m = resultsrun.write_job(tmp_path, row, results=results, skip={4},
                             commit="0" * 40)
    # the matrix row asks for c=64 too, which the manifest never had
    row["conc"].append(64)
    (m.parent / "row.json").write_text(json.dumps(row))
    data = json.loads(m.read_text())
    data["unexpected-files"] = [{"file": "x-c999.json", "reason": "concurrency 999 was not "
                                                                 "requested"}]
    m.write_text(json.dumps(data))
    problems, _ = _problems(tmp_path, srt_slurm_commit=resultsrun.COMMIT)
    found = {(p.kind, p.point.rsplit(" ", 1)[-1]) for p in problems}
    assert ("missing", "c=4") in found and ("missing", "c=64") in found
    assert ("short", "c=8") in found and ("failed", "c=16") in found
    assert ("identity", "c=32") in found
    assert any(p.kind == "unexpected" and "x-c999.json" in p.message for p in problems)
    report = check.text_report(problems, {"complete": 0, "expected": 5})
    assert "FAILED" in report
    annotations = check.github_annotations(problems)
    assert annotations.startswith("::error file=") and "c=8" in annotations


def test_check_reports_an_unusable_point_instead_of_stopping(tmp_path):
    m = resultsrun.write_job(tmp_path, resultsrun.disagg_row([4, 8]))
    (m.parent / "logs/fixed-seq/mi355x-atom-dsv4-disagg-1p1d-tp8-8k1k-c8.json").unlink()
    problems, _ = _problems(tmp_path)
    assert [(p.kind, p.point.rsplit(" ", 1)[-1]) for p in problems] == [("unusable", "c=8")]
    assert "does not exist" in problems[0].message


def _rows(tput, ttft, intvty_tpot_ms):
    return {"rows": [{"config_key": "k", "topology": "1p-tp8+1d-tp8", "isl": 8192,
                      "osl": 1024, "scale_down": 1.0, "conc": 4, "tput_per_gpu": tput,
                      "median_ttft": ttft, "median_intvty": 1000 / intvty_tpot_ms}]}


def test_compare_flags_regressions_in_the_bad_direction_only():
    base, new = _rows(1000.0, 0.100, 20.0), _rows(940.0, 0.080, 20.0)   # −6 %, −20 %, 0 %
    changes, only_b, only_n = compare.compare(base, new)
    limits = {m: d for m, (_, _, d) in compare.METRICS.items()}
    text, regressions = compare.markdown(changes, only_b, only_n, limits)
    assert regressions == 1 and "(-6.0%) **regression**" in text and "(-20.0%)" in text
    limits["tput_per_gpu"] = 7.0
    assert compare.markdown(changes, only_b, only_n, limits)[1] == 0
