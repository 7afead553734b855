"""Numbers no engine can produce are refused, with their rule, file and field: in a client
result being processed, and in a row read back from an aggregate or a row file. Each tampered
input is built so that a checker of types and signs alone (the schema's) passes it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from infersweep.config.schema import validate_data
from infersweep.diagnostics import InputError
from infersweep.results import check, collect, plausible, process
from tests import resultsrun

LABEL = "dsv4-fp4-mi355x-atom-disagg mi355x-atom-dsv4-disagg-1p1d-tp8-8k1k c=4"
STATS = ("mean", "median", "std", "p90", "p99", "p99.9")


def _one(tmp_path, **over):
    m = resultsrun.write_job(tmp_path, resultsrun.disagg_row([4]),
                             results={4: resultsrun.result(4, 4, **over)})
    point = process.points_of(m)[0]
    return process.process_point(point, allow_incomplete=True), point


def _refusal(tmp_path, **over) -> InputError:
    with pytest.raises(InputError) as err:
        _one(tmp_path, **over)
    return err.value


def test_an_honest_point_passes_every_rule(tmp_path):
    done, _ = _one(tmp_path)
    assert plausible.check(done.row) == [] and done.warnings == []


def _all(metric, value):
    return {f"{s}_{metric}_ms": value for s in STATS}


@pytest.mark.parametrize(("over", "rule", "key", "fragment"), [
    # zero throughput although every request completed, the counts consistent with it
    ({"output_throughput": 0.0, "total_token_throughput": 0.0, "request_throughput": 0.0},
     "results-zero", "request_throughput", "request_throughput is 0 although 4 request(s) "
                                           "completed"),
    ({"duration": 0.0, "request_throughput": 0.0, "total_output_tokens": 400,
      "total_input_tokens": 4000}, "results-zero", "duration",
     "duration is 0 although 4 request(s) completed"),
    # TPOT 0 with an OSL of 1024
    (_all("tpot", 0.0), "results-zero", "mean_tpot_ms",
     "mean_tpot_ms is 0 although the point asked for 1024 output tokens per request"),
    (_all("ttft", 0.0), "results-zero", "mean_ttft_ms", "no first token comes in no time"),
    # 1e308 tokens/s, the counts over a duration of 1e-300 s saying the same
    ({"total_token_throughput": 1e308, "output_throughput": 1e307, "duration": 1e-300,
      "total_input_tokens": 9 * 10**7, "total_output_tokens": 10**7},
     "results-bound", "total_token_throughput",
     "total_token_throughput over 16 GPU(s) is 6.25e+306 tok/s per GPU, above the tokens per "
     "GPU bound of 25,000,000 tok/s/GPU"),
    # a billion tokens a second on 16 GPUs: 62.5 M per GPU, consistent with its counts
    ({"total_token_throughput": 1e9, "output_throughput": 1e8}, "results-bound",
     "total_token_throughput", "is 6.25e+07 tok/s per GPU, above the tokens per GPU bound"),
    (_all("tpot", 0.001), "results-bound", "mean_tpot_ms",
     "mean_tpot_ms is 0.001 ms, below the time per token bound of 0.05 ms"),
    # rates that do not follow from the counts and the duration
    ({"output_throughput": 6000.0, "total_output_tokens": 400}, "results-consistency",
     "output_throughput", "output_throughput is 6000, but total_output_tokens / duration = "
                          "400 / 10 s = 40"),
    ({"request_throughput": 40.0}, "results-consistency", "request_throughput",
     "request_throughput is 40, but completed / duration = 4 / 10 s = 0.4"),
    ({"p99.9_e2el_ms": 60_000.0}, "results-consistency", "p99.9_e2el_ms",
     "p99.9_e2el_ms is 60000 ms, longer than the whole benchmark (duration 10 s)"),
    ({"p99_ttft_ms": 100.0}, "results-consistency", "p99_ttft_ms",
     "p99_ttft_ms 100 ms is below p90_ttft_ms 225 ms"),
    ({"output_throughput": 30000.0, "total_output_tokens": 300000,
      "total_input_tokens": 0}, "results-consistency", "output_throughput",
     "output_throughput 30000 exceeds total_token_throughput 24000"),
    ({"total_output_tokens": 2**63}, "results-number", "total_output_tokens",
     f"total_output_tokens is {2**63}, expected a whole number from 0 to"),
])
def test_numbers_no_engine_produces_are_refused(tmp_path, over, rule, key, fragment):
    err = _refusal(tmp_path, **over)
    found = [d for d in err.diagnostics if d.rule == rule and fragment in d.message]
    assert found, str(err)
    d = found[0]
    assert d.path.endswith("logs/fixed-seq/mi355x-atom-dsv4-disagg-1p1d-tp8-8k1k-c4.json")
    assert d.message.startswith(LABEL) and d.hint
    line = Path(d.path).read_text().splitlines()[d.line - 1] if d.line else ""
    assert line.lstrip().startswith(f'"{key}"'), (d.line, line)


def test_a_zero_tpot_the_client_read_whole_is_refused_with_the_reason(tmp_path):
    """A client that fell behind its server read whole responses: their TPOT is 0. The point
    still fails (its numbers time the client), but the hint says why and what to do."""
    err = _refusal(tmp_path, **_all("tpot", 0.0),
                   client={"requests_read_whole": 3, "lagging": True})
    tpot = [d for d in err.diagnostics if d.message.startswith(f"{LABEL}: mean_tpot_ms is 0")]
    assert tpot, str(err)
    assert "read every token of 3 of 4 request(s) in one read" in tpot[0].hint
    assert "broken or was edited" not in tpot[0].hint
    honest = _refusal(tmp_path / "honest", **_all("tpot", 0.0))  # no count: edited or broken
    assert all("broken or was edited" in d.hint for d in honest.diagnostics
               if d.rule == "results-zero")


def test_a_number_json_reads_as_infinity_is_refused_where_it_stands(tmp_path):
    m = resultsrun.write_job(tmp_path, resultsrun.disagg_row([4]))
    path = m.parent / "logs/fixed-seq/mi355x-atom-dsv4-disagg-1p1d-tp8-8k1k-c4.json"
    path.write_text(path.read_text().replace('"median_ttft_ms": 150.0', '"median_ttft_ms": 1e999'))
    with pytest.raises(InputError) as err:
        process.process_point(process.points_of(m)[0])
    d = err.value.diagnostics[0]
    assert d.rule == "results-number" and "median_ttft_ms is inf" in d.message
    assert path.read_text().splitlines()[d.line - 1].strip().startswith('"median_ttft_ms"')


def _aggregate(tmp_path):
    run = tmp_path / "run"
    resultsrun.write_job(run, resultsrun.disagg_row([4, 8]))
    g = collect.gather([run], allow_incomplete=True)
    return collect.aggregate(g)


@pytest.mark.parametrize(("field", "value", "rule", "fragment"), [
    ("tput_per_gpu", 9000.0, "results-consistency",
     "/rows/1/tput_per_gpu is 9000, but the point's throughput over its GPUs gives 1500"),
    ("median_intvty", 500.0, "results-consistency",
     "/rows/1/median_intvty is 500, but 1 / /rows/1/median_tpot gives 50"),
    ("median_tpot", 0.0, "results-zero", "/rows/1/median_tpot is 0 although the point asked "
                                         "for 1024 output tokens"),
    ("output_tput_per_gpu", 3e7, "results-bound", "/rows/1/output_tput_per_gpu is 3e+07, "
                                                  "above the tokens per GPU bound"),
])
def test_an_edited_aggregate_row_is_unusable_at_its_pointer(tmp_path, field, value, rule,
                                                             fragment):
    agg = _aggregate(tmp_path)
    agg["rows"][1][field] = value
    assert validate_data(agg, "results-aggregate") == []  # the schema lets it through
    path = tmp_path / "agg.json"
    path.write_bytes(collect.to_json(agg))
    g = collect.gather([path], allow_incomplete=True)
    assert [r["conc"] for r in g.rows] == [4]
    problems, counts = check.check(collect.aggregate(g), errors=g.errors)
    assert [(p.kind, p.point.rsplit(" ", 1)[-1], p.file) for p in problems] == [
        ("unusable", "c=8", str(path))]
    assert problems[0].message.startswith(f"[{rule}] ") and fragment in problems[0].message
    assert counts["complete"] == 1
    with pytest.raises(InputError, match=rf"\[{rule}\]"):
        collect.raise_errors(g)


def test_infinity_in_an_aggregate_is_refused_as_the_store_would(tmp_path):
    agg = _aggregate(tmp_path)
    path = tmp_path / "agg.json"
    text = collect.to_json(agg).decode()
    path.write_text(text.replace('"p99_e2el": 4.0', '"p99_e2el": 1e999', 1))
    g = collect.gather([path], allow_incomplete=True)
    problems, _ = check.check(collect.aggregate(g), errors=g.errors)
    assert len(problems) == 1 and "[results-number] /rows/0/p99_e2el is inf" in \
        problems[0].message


def test_a_row_file_with_impossible_numbers_fails_the_gate(tmp_path):
    row = _aggregate(tmp_path)["rows"][0]
    row["total_token_throughput"] = 1e12
    path = tmp_path / "x.row.json"
    path.write_text(json.dumps(row))
    g = collect.gather([path], allow_incomplete=True)
    problems, _ = check.check(collect.aggregate(g), errors=g.errors)
    assert {(p.kind, p.file) for p in problems} == {("unusable", str(path))}
    assert "[results-consistency] /total_token_throughput is 1e+12" in problems[0].message


def test_zero_tpot_is_held_only_where_requests_decoded_and_the_median_itl_never(tmp_path):
    # a client that reads several chunks at once stamps them alike: the median ITL may be 0
    done, _ = _one(tmp_path, median_itl_ms=0.0)
    assert done.row["median_itl"] == 0.0
    assert plausible.check({"completed": 4, "total_output_tokens": 4, "run_osl": 1,
                            "median_tpot": 0.0, "median_ttft": 0.1, "duration": 10.0}) == []
