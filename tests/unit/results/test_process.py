"""Processed rows against values computed by hand."""

from __future__ import annotations

import json

import pytest

from infersweep.config.schema import validate_data
from infersweep.diagnostics import InputError
from infersweep.results import process
from tests import resultsrun


def _one(manifest, conc, **kw):
    point = next(p for p in process.points_of(manifest) if p.entry["conc"] == conc)
    return process.process_point(point, **kw)


def test_disaggregated_2p1d_by_hand(tmp_path):
    # 2 prefill workers × TP8 = 16 GPUs, 1 decode worker × TP8 = 8 GPUs
    row = resultsrun.disagg_row([64], prefill=(2, 8), decode=(1, 8), dpa=True)
    m = resultsrun.write_job(tmp_path, row, name="r-2p1d")
    got = _one(m, 64)
    r = got.row
    assert r["num_prefill_gpu"] == 16 and r["num_decode_gpu"] == 8
    assert r["tput_per_gpu"] == pytest.approx(24000 / 24)          # 1000: total / (P + D)
    assert r["output_tput_per_gpu"] == pytest.approx(6000 / 8)     # 750: output / D
    assert r["input_tput_per_gpu"] == pytest.approx(18000 / 16)    # 1125: (total − output) / P
    assert r["median_intvty"] == pytest.approx(1000 / 20.0)        # 50 tok/s/user
    assert r["p99_intvty"] == pytest.approx(1000 / 40.0)           # 25: the slow tail
    assert r["p99.9_intvty"] == pytest.approx(1000 / 50.0)
    assert r["median_ttft"] == pytest.approx(0.150)                # ms → s
    assert r["p99_e2el"] == pytest.approx(4.0)
    assert r["prefill_dp_attention"] == "true" and r["decode_num_workers"] == 1
    assert r["topology"] == "2p-tp8-dpa+1d-tp8-dpa"
    assert r["is_multinode"] is True and r["disagg"] is True
    assert r["power_valid"] == 0 and "avg_power_w" not in r and "total_gpu_energy_j" not in r
    assert (r["config_key"], r["image"], r["srt_slurm_commit"], r["engine_revision"],
            r["run_id"], r["attempt"], r["job_id"]) == (
        "dsv4-fp4-mi355x-atom-disagg", resultsrun.IMAGE, resultsrun.COMMIT,
        resultsrun.REVISION, "run-1", 1, "job-run-1-1")
    assert len(r["recipe_fingerprint"]) == 64
    assert (r["completed"], r["num_prompts"], r["failed"], r["total_token_throughput"]) == (
        64, 64, 0, 24000.0)
    assert got.warnings == []
    assert validate_data(r, "results-row") == []


def test_single_node_divides_by_tp_pp_pcp_not_dcp(tmp_path):
    row = resultsrun.single_row([8], tp=4, pp=2, pcp=1, dcp=2)     # N = 4 × 2 × 1 = 8
    m = resultsrun.write_job(tmp_path, row, config_key="gptoss-fp4-h200-vllm", name="h200")
    r = _one(m, 8).row
    assert r["tput_per_gpu"] == pytest.approx(24000 / 8)           # 3000
    assert r["output_tput_per_gpu"] == pytest.approx(6000 / 8)     # 750
    assert r["input_tput_per_gpu"] == pytest.approx(18000 / 8)     # 2250
    assert (r["tp"], r["pp"], r["dcp_size"], r["ep"], r["dp_attention"]) == (4, 2, 2, 4, "false")
    assert r["is_multinode"] is False and r["topology"] == "tp4-pp2-dcp2-ep4"
    assert validate_data(r, "results-row") == []


def test_null_concurrency_and_missing_statistics_are_null_fields_with_warnings(tmp_path):
    row = resultsrun.disagg_row([4])
    res = resultsrun.result(4, 4, max_concurrency=None, p99_ttft_ms=None)
    del res["p90_itl_ms"]
    m = resultsrun.write_job(tmp_path, row, results={4: res})
    got = _one(m, 4)
    assert got.row["conc"] == 4
    assert got.row["p99_ttft"] is None and got.row["p90_itl"] is None
    text = "\n".join(got.warnings)
    assert "max_concurrency is null" in text and "p90_itl_ms is missing" in text
    assert "p99_ttft_ms is null" in text


def test_zero_tpot_of_one_token_answers_is_a_null_interactivity_with_a_warning(tmp_path):
    # OSL 1: every request's one token is its first, so no request has a TPOT
    row = resultsrun.disagg_row([4])
    row["osl"] = 1
    zero = {f"{s}_{m}_ms": 0.0 for s in ("mean", "median", "std", "p90", "p99", "p99.9")
            for m in ("tpot", "itl")}
    res = resultsrun.result(4, 4, output_throughput=0.4, total_token_throughput=400.4, **zero)
    m = resultsrun.write_job(tmp_path, row, results={4: res})
    got = _one(m, 4)
    assert got.row["total_output_tokens"] == 4 and got.row["p99_intvty"] is None
    assert "p99_tpot_ms is 0; p99_intvty is null" in "\n".join(got.warnings)


def test_gpu_counts_disagreeing_with_workers_times_tp_are_an_error(tmp_path):
    row = resultsrun.disagg_row([4], prefill=(2, 8))
    m = resultsrun.write_job(tmp_path, row, gpus={"prefill": 8, "decode": 8, "total": 16})
    with pytest.raises(InputError, match=r"manifest counts 8 prefill and 8 decode GPUs.*16 and 8"):
        _one(m, 4)


@pytest.mark.parametrize("over, fragment", [
    ({"completed": 3}, "completed 3 of 4 requested"),
    ({"failed": 1}, "1 failed"),
    ({"completed": -1}, "[results-number] dsv4-fp4-mi355x-atom-disagg "
                        "mi355x-atom-dsv4-disagg-1p1d-tp8-8k1k c=4: completed is -1, expected "
                        "a non-negative integer"),
    ({"max_concurrency": 8}, "the result is for concurrency 8, the manifest point for 4"),
    ({"output_throughput": "fast"}, "output_throughput is 'fast'"),
    ({"median_ttft_ms": -3.0}, "median_ttft_ms is -3.0, expected a finite number"),
    ({"p99_e2el_ms": "slow"}, "p99_e2el_ms is 'slow', expected a finite number"),
])
def test_bad_results_name_file_and_point(tmp_path, over, fragment):
    m = resultsrun.write_job(tmp_path, resultsrun.disagg_row([4]),
                             results={4: resultsrun.result(4, 4, **over)})
    with pytest.raises(InputError) as exc:
        _one(m, 4)
    text = str(exc.value)
    assert fragment in text and "c=4" in text and "-c4.json" in text


def test_incomplete_point_kept_as_unsuccessful_when_allowed(tmp_path):
    m = resultsrun.write_job(tmp_path, resultsrun.disagg_row([4]),
                             results={4: resultsrun.result(4, 4, completed=3, failed=1)})
    r = _one(m, 4, allow_incomplete=True).row
    assert r["successful"] is False and r["completed"] == 3


def test_missing_point_gives_no_row_and_a_warning(tmp_path):
    m = resultsrun.write_job(tmp_path, resultsrun.disagg_row([4, 8]), skip={8})
    got = _one(m, 8)
    assert got.row is None and "no result file" in got.warnings[0]


def test_fast_schema_check_agrees_with_the_strict_one_on_integral_floats(tmp_path):
    from infersweep.results import fastschema

    m = resultsrun.write_job(tmp_path, resultsrun.disagg_row([4]))
    data = json.loads(m.read_text())
    assert fastschema.valid(data, "result-manifest")
    data["points"][0]["conc"] = 4.0            # JSON Schema's integer, not the project's
    assert not fastschema.valid(data, "result-manifest")
    assert validate_data(data, "result-manifest")
    m.write_text(json.dumps(data))
    with pytest.raises(InputError, match="conc"):
        process.points_of(m)
