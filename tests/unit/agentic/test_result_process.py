"""`agentic process` on real (trimmed) replay exports: InferenceX's agentic shape, numbers
recomputed from the records, server metrics per engine family, the schema on every write."""

from __future__ import annotations

import json

import pytest

from infersweep.agentic import result, resultexports
from infersweep.diagnostics import InputError
from tests.unit.agentic import agenticjob
from tests.unit.agentic.agenticjob import EXPORTS


@pytest.fixture
def job(tmp_path):
    path = agenticjob.make(tmp_path / "job")
    return path, agenticjob.load(path)


def test_counts_and_accounting_are_the_profiling_records(job):
    _, r = job
    recs = [json.loads(x) for x in (EXPORTS / "vllm-c2" / "profile_export.jsonl").open()]
    prof = [x for x in recs if x["metadata"]["benchmark_phase"] == "profiling"]
    agg = json.loads((EXPORTS / "vllm-c2" / "profile_export_aiperf.json").read_text())
    assert r["num_requests_successful"] == len(prof) == agg["request_count"]["avg"] == 80
    assert r["num_requests_total"] == len(recs)
    acc = r["request_accounting"]
    assert acc["records_warmup_dropped"] == len(recs) - len(prof)
    assert acc["error_request_count"] == 0 and acc["error_rate"] == 0
    assert r["conc"] == 2 and r["scenario_type"] == "agentic-coding"
    assert (r["tp"], r["num_gpus"], r["dp_attention"]) == (2, 2, "false")


def test_throughput_spans_first_start_to_last_end_and_per_gpu_divides_by_the_row(job):
    _, r = job
    prof = [json.loads(x) for x in (EXPORTS / "vllm-c2" / "profile_export.jsonl").open()]
    prof = [x for x in prof if x["metadata"]["benchmark_phase"] == "profiling"]
    span = (max(x["metadata"]["request_end_ns"] for x in prof)
            - min(x["metadata"]["request_start_ns"] for x in prof)) / 1e9
    tin = sum(x["metrics"]["input_sequence_length"]["value"] for x in prof)
    tout = sum(x["metrics"]["output_sequence_length"]["value"] for x in prof)
    tp = r["request_metrics"]["throughput"]
    assert tp["duration_seconds"] == pytest.approx(span)
    assert tp["total"]["tokens_per_second"] == pytest.approx((tin + tout) / span)
    assert tp["per_gpu"]["output_tput_tps"] == pytest.approx(tout / span / 2)
    assert r["request_metrics"]["tokens"]["input"]["total"] == tin


def test_latency_in_seconds_interactivity_is_the_inverse_and_tails_are_slow(job):
    _, r = job
    lat = r["request_metrics"]["latency"]
    agg = json.loads((EXPORTS / "vllm-c2" / "profile_export_aiperf.json").read_text())
    assert lat["tpot"] == lat["itl"]
    assert lat["intvty"]["p99"] == pytest.approx(1 / lat["itl"]["p99"])
    assert lat["intvty"]["p99"] < lat["intvty"]["p50"]
    assert set(lat) == {"ttft", "e2el", "itl", "tpot", "intvty", "e2e_norm_intvty",
                        "full_response_itl", "full_response_intvty"}
    assert lat["ttft"]["mean"] > 0 and lat["e2el"]["p99"] >= lat["e2el"]["p50"]
    hit = agg["theoretical_prefix_cache_hit"]
    assert r["request_metrics"]["cache"]["theoretical_cache_hit_rate"] == pytest.approx(
        hit["sum"] / hit["count"])
    expected = r["request_metrics"]["tokens"]["output_expected"]
    assert expected["total"] == r["request_metrics"]["tokens"]["output_actual"]["total"]


def test_vllm_server_metrics_are_window_deltas_by_source(job):
    _, r = job
    sm = r["server_metrics"]
    assert sm["adapter"] == "vllm" and sm["required_prefix_present"] is True
    assert sm["tokens"]["prompt_total"] == r["request_metrics"]["tokens"]["input"]["total"]
    src = sm["tokens"]["prompt_by_source"]["raw"]
    assert set(src) == {"local_cache_hit", "external_kv_transfer", "local_compute"}
    whole = sum(src.values())
    assert sm["server_gpu_cache_hit_rate"] == pytest.approx(src["local_cache_hit"] / whole)
    assert sm["server_cpu_cache_hit_rate"] == pytest.approx(
        src["external_kv_transfer"] / whole)
    assert sm["server_overall_cache_hit_rate"] == pytest.approx(
        (src["local_cache_hit"] + src["external_kv_transfer"]) / whole)
    assert r["kv_cache_pool_tokens"] == 8192 * 16
    assert 0 < sm["gpu_kv_cache_usage_pct"] <= 1


def test_sglang_row_reads_sglang_families_not_the_vllm_ones_beside_them(tmp_path):
    r = agenticjob.row(framework="sglang", conc=1)
    path = agenticjob.make(tmp_path / "job", exports="sglang-c1", matrix_row=r,
                           scaled={"duration": {"original": 3600, "run": 20.0}})
    sm = agenticjob.load(path)["server_metrics"]
    assert sm["adapter"] == "sglang" and sm["required_prefix"] == "sglang:"
    cached = sm["cache"]["cached_tokens_by_source"]
    prompt = sm["tokens"]["prompt_total"]
    assert sm["server_gpu_cache_hit_rate"] == pytest.approx(cached["device"] / prompt)
    assert sm["server_cpu_cache_hit_rate"] == pytest.approx(cached["host"] / prompt)
    assert sm["kv_cache"]["gpu_total_tokens"] == 131072


def test_scaled_run_is_marked_not_publishable_with_the_original_values(job):
    _, r = job
    assert r["scaled"]["duration"] == {"original": 3600, "run": 40.0}
    assert r["publishable"] is False
    assert "duration 40 of 3600" in r["publishable_reason"]
    assert r["submission_valid"] is False and r["artifacts"] == "aiperf_artifacts"


def test_every_written_result_matches_its_schema(job):
    path, r = job
    assert result.schema_problems(r) == []
    bad = dict(r, surprise=1)
    assert result.schema_problems(bad)
    scaled_but_publishable = dict(r, publishable=True)
    assert result.schema_problems(scaled_but_publishable)


def test_gpus_that_disagree_with_the_row_are_refused_and_nothing_is_written(tmp_path):
    folder = tmp_path / "job"
    agenticjob.make(folder)
    out = folder / "other.agentic.json"
    with pytest.raises(InputError, match="parallelism gives 2"):
        result.process(folder / "aiperf_artifacts", agenticjob.row(), framework="vllm",
                       gpus=8, scaled=None)
    assert not out.exists()


def test_exports_of_another_concurrency_are_refused(tmp_path):
    folder = tmp_path / "job"
    agenticjob.make(folder)
    with pytest.raises(InputError, match="concurrency 2"):
        result.process(folder / "aiperf_artifacts", agenticjob.row(conc=4), framework="vllm",
                       gpus=2, scaled=None)


def test_a_broken_record_line_is_located(tmp_path):
    folder = tmp_path / "job"
    agenticjob.make(folder)
    jsonl = folder / "aiperf_artifacts" / resultexports.RECORDS
    jsonl.write_text(jsonl.read_text() + "{not json\n")
    with pytest.raises(InputError) as exc:
        result.process(folder / "aiperf_artifacts", agenticjob.row(), framework="vllm",
                       gpus=2, scaled=None)
    d = exc.value.diagnostics[0]
    assert d.path.endswith(resultexports.RECORDS) and d.line == 85


def test_cli_writes_the_result_and_refuses_a_fixed_length_row(tmp_path, capsys):
    from infersweep.cli import main

    folder = tmp_path / "job"
    agenticjob.make(folder)
    scaled = tmp_path / "scaled.json"
    scaled.write_text(json.dumps(agenticjob.SCALED))
    out = folder / "cli.agentic.json"
    args = ["agentic", "process", "--artifacts", str(folder / "aiperf_artifacts"), "--row",
            str(folder / "row.json"), "--out", str(out), "--scaled-down-json", str(scaled)]
    main(args)
    assert agenticjob.load(out)["publishable"] is False
    fixed = tmp_path / "fixed.json"
    fixed.write_text(json.dumps(agenticjob.row() | {"scenario-type": "fixed-seq-len"}))
    out2 = folder / "no.agentic.json"
    with pytest.raises(SystemExit) as exc:
        main(args[:5] + [str(fixed), "--out", str(out2)])
    assert exc.value.code == 1 and not out2.exists()
    assert "[agentic-input] the matrix row's scenario-type" in capsys.readouterr().err
