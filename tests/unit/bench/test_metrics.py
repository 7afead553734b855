import math

import pytest

from infersweep.bench.metrics import read_whole, request_metrics, summarize


def rec(i, start, times, out, ok=True, prompt=10, toks=None):
    us = [round((t - start) * 1e6) for t in times]
    gaps = [us[0]] + [b - a for a, b in zip(us, us[1:], strict=False)] if us else []
    return {"id": i, "ok": ok, "start_s": start, "chunk_gaps_us": gaps, "output_tokens": out,
            "prompt_len": prompt, "chunk_tokens": toks, "error_class": "" if ok else "http_5xx"}


RECS = [
    rec(0, 0.0, [0.1, 0.15, 0.25, 0.3], 4, prompt=10),
    rec(1, 1.0, [1.2, 1.3], 2, prompt=20),
    rec(2, 0.5, [], 0, ok=False, prompt=30),
]


def test_per_request_definitions():
    m = request_metrics(RECS[0])
    assert m.ttft == pytest.approx(0.1)
    assert m.e2el == pytest.approx(0.3)
    assert m.tpot == pytest.approx(0.2 / 3)
    assert m.chunk_gaps == pytest.approx([0.05, 0.1, 0.05])


def test_summary_matches_hand_computation():
    s = summarize(RECS, num_prompts=3, duration=2.0, percentiles=(50, 90, 99))
    assert s["completed"] == 2 and s["failed"] == 1
    assert s["total_input_tokens"] == 30  # failed request's prompt excluded
    assert s["total_output_tokens"] == 6
    assert s["request_throughput"] == pytest.approx(1.0)
    assert s["output_throughput"] == pytest.approx(3.0)
    assert s["total_token_throughput"] == pytest.approx(18.0)
    assert s["mean_ttft_ms"] == pytest.approx(150.0)
    assert s["std_ttft_ms"] == pytest.approx(50.0)  # population std
    assert s["p99_ttft_ms"] == pytest.approx(199.0)  # linear interpolation
    assert s["mean_tpot_ms"] == pytest.approx((200 / 3 + 100) / 2)
    assert s["mean_itl_ms"] == pytest.approx(75.0)  # pooled gaps 50,100,50,100
    assert s["median_itl_ms"] == pytest.approx(75.0)
    assert s["p90_itl_ms"] == pytest.approx(100.0)
    assert s["mean_e2el_ms"] == pytest.approx(300.0)
    assert s["p50_e2el_ms"] == pytest.approx(300.0)
    assert s["request_goodput:"] is None


def test_std_is_population():
    s = summarize([RECS[0]], 1, 1.0, percentiles=())
    gaps = [50.0, 100.0, 50.0]
    mean = sum(gaps) / 3
    assert s["std_itl_ms"] == pytest.approx(math.sqrt(sum((g - mean) ** 2 for g in gaps) / 3))


def test_per_token_itl_splits_multi_token_chunks():
    r = rec(0, 0.0, [0.1, 0.15, 0.25, 0.3], 6, toks=[1, 2, 0, 3])
    m = request_metrics(r)
    # 50 ms over 2 tokens; the empty chunk's 100 ms carries into the next 3-token chunk
    assert [round(x * 1000, 6) for x in m.token_itls] == [25, 25, 50, 50, 50]
    assert m.chunk_gaps == pytest.approx([0.05, 0.1, 0.05])
    s = summarize([r], 1, 1.0, percentiles=())
    assert s["mean_itl_ms"] == pytest.approx(40.0)
    assert s["mean_chunk_gap_ms"] == pytest.approx(200 / 3)


def test_single_token_request_has_no_tpot_and_empty_metrics_are_zero():
    s = summarize([rec(0, 0.0, [0.05], 1)], 1, 1.0, percentiles=(99,))
    assert s["mean_tpot_ms"] == 0.0 and s["p99_itl_ms"] == 0.0
    assert s["mean_ttft_ms"] == pytest.approx(50.0)


def test_requests_read_whole_are_those_whose_every_token_came_with_the_first():
    whole = rec(0, 0.0, [0.2, 0.2, 0.2], 3, toks=[1, 1, 1])  # three chunks, one read
    split = rec(1, 0.0, [0.2, 0.2, 0.25], 3, toks=[1, 1, 1])
    one = rec(2, 0.0, [0.2], 1)                               # one token: no TPOT to time
    failed = rec(3, 0.0, [0.2, 0.2], 2, ok=False)
    assert read_whole([whole, split, one, failed]) == 1


def test_goodput_counts_requests_within_all_slos():
    s = summarize(RECS, 3, 2.0, goodput={"ttft": 150.0})
    assert s["request_goodput:"] == pytest.approx(0.5)
