import asyncio

import pytest

from infersweep.sim.model import ModelParams
from infersweep.sim.server import SimConfig, SimServer, prompt_of

FAST = ModelParams(prefill_tps=1e6, decode_base_ms=1.0, decode_per_seq_ms=0.0, max_num_seqs=2)


def make(params=FAST, **kw):
    return SimServer(SimConfig(served_model_names=["m"], model=params, **kw))


async def drain(srv, resps, timeout=3.0):
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not all(r.ended or (r.status and r.status != 200 and not r.streaming) or
                  (r.obj is not None and not r.streaming) for r in resps):
        assert loop.time() < end, "simulator did not finish"
        await asyncio.sleep(0.002)


def test_context_limit_is_http_400_with_engine_message(fake):
    Resp, Req = fake

    async def go():
        srv = make(max_model_len=100)
        r = Resp()
        srv.handle(Req({"model": "m", "prompt": list(range(90)), "max_tokens": 20}), r)
        return r

    r = asyncio.run(go())
    assert r.status == 400
    assert "maximum context length is 100 tokens" in r.obj["message"]
    assert "110 tokens (90 in the messages, 20 in the completion)" in r.obj["message"]


def test_unknown_model_is_404_and_bad_prompt_400(fake):
    Resp, Req = fake

    async def go():
        srv = make()
        a, b = Resp(), Resp()
        srv.handle(Req({"model": "other", "prompt": "x"}), a)
        srv.handle(Req({"model": "m", "prompt": {"x": 1}}), b)
        return a, b

    a, b = asyncio.run(go())
    assert a.status == 404 and b.status == 400


def test_max_completion_tokens_wins_over_max_tokens(fake):
    Resp, Req = fake

    async def go():
        srv = make()
        r = Resp()
        srv.handle(Req({"model": "m", "messages": [{"role": "user", "content": "a b"}],
                        "max_tokens": 50, "max_completion_tokens": 3, "stream": False},
                       path="/v1/chat/completions"), r)
        await drain(srv, [r])
        return r

    r = asyncio.run(go())
    assert r.obj["usage"]["completion_tokens"] == 3
    assert r.obj["usage"]["prompt_tokens"] == 2
    assert r.obj["choices"][0]["finish_reason"] == "length"


def test_admission_limit_queues_extra_requests(fake):
    Resp, Req = fake

    async def go():
        srv = make()
        resps = [Resp() for _ in range(5)]
        for r in resps:
            srv.handle(Req({"model": "m", "prompt": [1, 2, 3], "max_tokens": 4, "stream": True,
                            "stream_options": {"include_usage": True}}), r)
        peak = 0
        loop = asyncio.get_running_loop()
        end = loop.time() + 3
        while not all(r.ended for r in resps):
            peak = max(peak, len(srv.engine.running) + len(srv.engine.prefilling))
            assert srv.engine.admitted <= 2
            assert loop.time() < end
            await asyncio.sleep(0.0005)
        return srv, resps, peak

    srv, resps, peak = asyncio.run(go())
    assert peak == 2
    for r in resps:
        ev = r.events()
        assert sum(1 for e in ev if e["choices"]) == 4
        assert ev[-1]["usage"]["completion_tokens"] == 4
    # queued requests started only after earlier ones finished
    first = sorted(t["send_ns"][0] for t in srv.truth)
    last = sorted(t["send_ns"][-1] for t in srv.truth)
    assert first[2] >= last[0]


def test_ground_truth_records_every_chunk(fake):
    Resp, Req = fake

    async def go():
        srv = make(ModelParams(fixed_ttft_ms=2, fixed_itl_ms=3, max_num_seqs=10, stream_interval=2))
        r = Resp()
        srv.handle(Req({"model": "m", "prompt": "a b c", "max_tokens": 7, "stream": True,
                        "stream_options": {"include_usage": True, "continuous_usage_stats": True}}), r)
        await drain(srv, [r])
        return srv, r

    srv, r = asyncio.run(go())
    (t,) = srv.truth
    assert t["completion_tokens"] == 7 and len(t["send_ns"]) == 4  # 2+2+2+1 tokens
    toks = [e["usage"]["completion_tokens"] for e in r.events() if e["choices"]]
    assert toks == [2, 4, 6, 7]
    # Never early: chunk k is due at arrival + TTFT (2 ms) + 2k tokens x 3 ms (0.2 ms counts as
    # on time). Deadlines are absolute, so on a loaded machine a late chunk followed by an
    # on-time one has a shorter gap; gaps between sends are not the invariant.
    for k, sent in enumerate(t["send_ns"]):
        assert sent >= t["arrival_ns"] + 2_000_000 + k * 6_000_000 - 200_000, k


def test_prompt_counting():
    assert prompt_of({"prompt": [1, 2, 3]}, False) == (None, 3)
    assert prompt_of({"prompt": "a b  c"}, False)[1] == 3
    assert prompt_of({"messages": [{"role": "user", "content": [{"type": "text", "text": "x y"}]}]},
                     True)[1] == 2
    with pytest.raises(ValueError):
        prompt_of({"messages": []}, True)
