"""Tokens per chunk come from what each chunk carries; TTFT is the first chunk carrying a
token; a final usage-only or empty chunk is no token gap (issues 8 and 10).

Each stream is scripted as an engine sends it, with arrival times, through the client's
parser, then through the record the worker writes and the metrics computed from it."""

from __future__ import annotations

import orjson
import pytest

from infersweep.bench.metrics import request_metrics, summarize
from infersweep.bench.stream import StreamSink
from infersweep.bench.worker import _exact_gaps

MS = 1_000_000  # ns


def ev(obj) -> bytes:
    return b"data: " + orjson.dumps(obj) + b"\n\n"


def text(t, usage=None, finish=None):
    choice = {"index": 0, "text": t}
    if finish:
        choice["finish_reason"] = finish
    obj = {"choices": [choice]}
    if usage is not None:
        obj["usage"] = usage
    return ev(obj)


def delta(d, usage=None, finish=None):
    choice = {"index": 0, "delta": d}
    if finish:
        choice["finish_reason"] = finish
    obj = {"choices": [choice]}
    if usage is not None:
        obj["usage"] = usage
    return ev(obj)


def usage(ct, pt=64, cached=None):
    u = {"prompt_tokens": pt, "completion_tokens": ct, "total_tokens": pt + ct}
    if cached is not None:
        u["prompt_tokens_details"] = {"cached_tokens": cached}
    return u


def stream(events: list[tuple[float, bytes]], chat=False) -> StreamSink:
    """(arrival ms, event bytes) through the parser, as the connection feeds it."""
    s = StreamSink(chat=chat)
    s.on_headers(200, {}, 0)
    for t_ms, data in events:
        s.on_body(data, int(t_ms * MS))
    s.finish()
    assert not s.error_class, s.error
    return s


def record(s: StreamSink, requested=16) -> dict:
    """The fields of the worker's record that the metrics read (dispatch at t = 0)."""
    return {"id": 0, "ok": True, "start_s": 0.0, "prompt_len": 64,
            "chunk_gaps_us": _exact_gaps(s.chunk_t, 0), "chunk_tokens": s.chunk_tok,
            "output_tokens": s.usage_out, "last_event_s": s.last_event_t / 1e9,
            "intended_output_len": requested, "finish_reason": s.finish_reason,
            "server_prompt_tokens": s.usage_in, "cached_prompt_tokens": s.cached_in}


def transformers_completion(n=16, ttft=100.0, itl=20.0):
    """`transformers serve` on /v1/completions: one token per event, no [DONE], and usage
    only in the last chunk, next to an empty choice (stream_options is ignored)."""
    evs = [(ttft + k * itl, text(f" w{k}")) for k in range(n)]
    evs.append((ttft + (n - 1) * itl + 0.05,
                text("", usage=usage(n), finish="length")))
    return evs


def test_usage_in_the_last_chunk_with_choices_is_no_token_gap():
    s = stream(transformers_completion())
    assert s.chunk_tok == [-1] * 16 + [0]  # the last chunk brings no text: no token
    m = request_metrics(record(s))
    assert len(m.token_itls) == 15  # one gap per token after the first
    assert [round(x * 1000, 3) for x in m.token_itls] == [20.0] * 15
    assert m.ttft == pytest.approx(0.1)
    summary = summarize([record(s)], 1, 1.0, percentiles=(50,))
    assert summary["median_itl_ms"] == pytest.approx(20.0)
    assert summary["total_output_tokens"] == 16
    # TPOT spans first token to the last chunk: (100.05 + 300 - 100) / 15
    assert summary["mean_tpot_ms"] == pytest.approx(300.05 / 15)


def test_a_usage_only_final_chunk_is_no_token_gap():
    evs = [(50 + k * 10.0, text("w")) for k in range(8)]
    evs += [(120.01, ev({"choices": [], "usage": usage(8)})), (120.02, b"data: [DONE]\n\n")]
    s = stream(evs)
    assert s.chunk_tok == [-1] * 8 and s.usage_out == 8
    m = request_metrics(record(s))
    assert [round(x * 1000, 3) for x in m.token_itls] == [10.0] * 7


def test_usage_sent_in_every_chunk_gives_each_chunk_its_delta():
    """vLLM's continuous_usage_stats with a stream interval: 1, 3, 2 tokens per chunk; the
    final chunk repeats the total (delta 0) and the usage-only chunk has no choices."""
    evs = [(10.0, text("a", usage=usage(1))), (40.0, text("b c d", usage=usage(4))),
           (60.0, text("e f", usage=usage(6))),
           (60.5, text("", usage=usage(6), finish="length")),
           (61.0, ev({"choices": [], "usage": usage(6)}))]
    s = stream(evs)
    assert s.chunk_tok == [1, 3, 2, 0]
    m = request_metrics(record(s))
    assert [round(x * 1000, 3) for x in m.token_itls] == [10.0, 10.0, 10.0, 10.0, 10.0]


def test_a_running_total_sent_late_is_not_taken_as_one_chunk_carrying_it_all():
    """Usage in the last text chunk (a total, as earlier chunks had none) is not that chunk's
    count: it carries text, so at least one token, and the gap is one token's."""
    evs = [(10.0, text("a")), (30.0, text("b")), (50.0, text("c", usage=usage(3)))]
    s = stream(evs)
    assert s.chunk_tok == [-1, -1, -1] and s.usage_out == 3
    assert [round(x * 1000, 3) for x in request_metrics(record(s)).token_itls] == [20.0, 20.0]


def test_chat_ttft_is_the_first_content_token_not_the_role_only_chunk():
    """`transformers serve` on chat: a role-only delta before prefill, then content, then an
    empty delta with finish_reason and usage."""
    evs = [(1.0, delta({"role": "assistant"}))]
    evs += [(200.0 + k * 15.0, delta({"content": f" w{k}"})) for k in range(5)]
    evs.append((260.2, delta({}, usage=usage(5), finish="length")))
    s = stream(evs, chat=True)
    assert s.chunk_tok == [0, -1, -1, -1, -1, -1, 0]
    rec = record(s, requested=5)
    m = request_metrics(rec, chat=True)
    assert m.ttft == pytest.approx(0.2)  # not 0.001: prefill happened after the role chunk
    assert [round(x * 1000, 3) for x in m.token_itls] == [15.0] * 4  # no prefill "gap"
    assert m.tpot == pytest.approx((0.2602 - 0.2) / 4)
    # the raw chunk gaps (InferenceX's ITL) keep every chunk, the role chunk included
    assert len(m.chunk_gaps) == 6 and m.chunk_gaps[0] == pytest.approx(0.199)


def test_vllm_chat_role_chunk_with_zero_usage_is_no_token():
    evs = [(1.0, delta({"role": "assistant", "content": ""}, usage=usage(0))),
           (90.0, delta({"content": "a"}, usage=usage(1))),
           (100.0, delta({"content": "b"}, usage=usage(2))),
           (101.0, ev({"choices": [], "usage": usage(2)}))]
    s = stream(evs, chat=True)
    assert s.chunk_tok == [0, 1, 1]
    m = request_metrics(record(s, requested=2), chat=True)
    assert m.ttft == pytest.approx(0.09)
    assert [round(x * 1000, 3) for x in m.token_itls] == [10.0]


def test_a_role_chunk_without_usage_does_not_end_per_chunk_counting():
    evs = [(1.0, delta({"role": "assistant"})), (50.0, delta({"content": "a b"}, usage=usage(2))),
           (70.0, delta({"content": "c"}, usage=usage(3)))]
    s = stream(evs, chat=True)
    assert s.chunk_tok == [0, 2, 1]


def test_cached_tokens_and_finish_reason_reach_the_record():
    s = stream([(5.0, text("a")), (6.0, text("", usage=usage(1, cached=48), finish="stop"))])
    assert s.cached_in == 48 and s.finish_reason == "stop"
    s = stream([(5.0, text("a")), (6.0, ev({"choices": [], "usage": usage(1)}))])
    assert s.cached_in is None and s.finish_reason is None


@pytest.mark.parametrize("details", ['"x"', '{"cached_tokens": -1}', '{"cached_tokens": 1.5}',
                                     '{"cached_tokens": "3"}'])
def test_malformed_cached_tokens_are_a_bad_field(details):
    s = StreamSink()
    s.on_headers(200, {}, 0)
    bad = (b'data: {"choices":[],"usage":{"completion_tokens":1,"prompt_tokens_details":'
           + details.encode() + b"}}\n\n")
    s.on_body(text("a"), 1)
    with pytest.raises(Exception) as ei:
        s.on_body(bad, 2)
    assert s.error_class == "protocol.bad_field" and "prompt_tokens_details" in str(ei.value)


def test_records_of_older_versions_still_recompute():
    """Records without per-chunk counts: every chunk carries one token, as before."""
    rec = {"id": 0, "ok": True, "start_s": 0.0, "chunk_gaps_us": [100_000, 20_000, 20_000],
           "chunk_tokens": None, "output_tokens": 3, "prompt_len": 8}
    m = request_metrics(rec)
    assert m.ttft == pytest.approx(0.1) and m.token_itls == pytest.approx([0.02, 0.02])


def test_usage_beyond_what_the_request_allowed_fails_it():
    """No engine returns more than max_tokens: 800,000 tokens claimed from 24 chunks is a
    failed request, not 800,000 tokens of throughput; exactly the limit is a success."""
    def sink(claimed: int) -> StreamSink:
        s = StreamSink(max_output=16)
        s.on_headers(200, {}, 0)
        for i in range(24):
            s.on_body(text(f" t{i}"), (i + 1) * MS)
        s.on_body(ev({"choices": [], "usage": usage(claimed)}), 25 * MS)
        s.finish()
        return s

    over = sink(800_000)
    assert over.error_class == "output_over_limit"
    assert over.error == ("usage.completion_tokens 800000 exceeds the 16 tokens the request "
                          "allowed (in 24 chunks)")
    assert sink(17).error_class == "output_over_limit"
    assert sink(16).error_class == ""
