"""The KV model inside the engine: preemption, usage's cached tokens, CPU-tier loads."""

import asyncio
import time

import orjson
import pytest

from infersweep.diagnostics import InputError
from infersweep.sim.commands import _build_config
from infersweep.sim.kvcache import KVConfig
from infersweep.sim.model import ModelParams
from infersweep.sim.server import SimConfig, SimServer
from tests.unit.sim.agenticload import Req, Resp


def server(kv: KVConfig, **model) -> SimServer:
    params = ModelParams(**{"prefill_tps": 1e6, "decode_base_ms": 1.0, "decode_per_seq_ms": 0.0,
                            **model}, kv=kv)
    return SimServer(SimConfig(served_model_names=["m"], model=params))


async def call(srv: SimServer, prompt: str, max_tokens: int = 6, stream: bool = True) -> Resp:
    req, resp = Req(prompt, "s"), Resp()
    body = orjson.loads(req.body)
    body.update(max_tokens=max_tokens, stream=stream)
    req.body = orjson.dumps(body)
    srv.handle(req, resp)
    end = time.monotonic() + 5
    while not resp.ended:
        assert time.monotonic() < end, "request did not finish"
        await asyncio.sleep(0.001)
    return resp


def stop(srv: SimServer) -> None:
    for e in srv.ranks:
        e.task.cancel()


def test_running_requests_that_outgrow_the_pool_preempt_the_newest_which_finishes_later():
    async def go():
        srv = server(KVConfig(page_size=10, pool_tokens=100))
        a = asyncio.create_task(call(srv, " ".join(["a"] * 20), max_tokens=60))
        await asyncio.sleep(0.003)
        b = asyncio.create_task(call(srv, " ".join(["b"] * 20), max_tokens=60))
        ra, rb = await a, await b
        stop(srv)
        return srv, ra, rb

    srv, ra, rb = asyncio.run(go())
    assert srv.kv_stats()["preemptions"] >= 1
    assert ra.usage()["completion_tokens"] == rb.usage()["completion_tokens"] == 60
    ends = {t["rid"]: t["send_ns"][-1] for t in srv.truth}
    assert ends[0] < ends[1]  # the older request ran on; the newer one waited and recomputed
    assert srv.ranks[0].kv.used_pages == 0  # every page came back


def test_the_streamed_usage_reports_cached_tokens_in_whole_pages():
    async def go():
        srv = server(KVConfig(prefix_caching=True, page_size=4))
        prompt = " ".join(f"w{i}" for i in range(30))
        first = await call(srv, prompt)
        again = await call(srv, prompt + " more words")
        stop(srv)
        return first, again

    first, again = asyncio.run(go())
    assert first.usage()["prompt_tokens_details"] == {"cached_tokens": 0}
    assert again.usage()["prompt_tokens_details"] == {"cached_tokens": 28}  # 7 full pages


def test_non_streamed_body_carries_cached_tokens(fake):
    Resp_, _ = fake

    async def go():
        srv = server(KVConfig(prefix_caching=True, page_size=4))
        prompt = " ".join(f"w{i}" for i in range(30))
        await call(srv, prompt)
        req = Req(prompt + " x", "s")
        req.body = orjson.dumps({"model": "m", "prompt": prompt + " x", "max_tokens": 2})
        resp = Resp_()
        srv.handle(req, resp)
        while resp.status is None:
            await asyncio.sleep(0.001)
        stop(srv)
        return resp.obj

    body = asyncio.run(go())
    assert body["usage"]["prompt_tokens_details"] == {"cached_tokens": 28}


def test_without_prefix_caching_usage_has_no_details():
    async def go():
        srv = server(KVConfig(page_size=4, pool_tokens=400))
        r = await call(srv, "a b c d e f g h i")
        stop(srv)
        return r

    assert "prompt_tokens_details" not in asyncio.run(go()).usage()


def test_a_cpu_tier_hit_waits_for_its_transfer():
    kv = KVConfig(prefix_caching=True, page_size=10, pool_tokens=60, cpu_tokens=1000,
                  kv_bytes_per_token=1_000_000, offload_gbps=1.0)  # 1 ms per token

    async def go():
        srv = server(kv)
        a = " ".join(f"a{i}" for i in range(41))
        await call(srv, a, max_tokens=1)
        await call(srv, " ".join(f"b{i}" for i in range(41)), max_tokens=1)  # evicts a
        t0 = time.monotonic()
        again = await call(srv, a + " next", max_tokens=1)
        took = time.monotonic() - t0
        stop(srv)
        return srv, again, took

    srv, again, took = asyncio.run(go())
    cached = again.usage()["prompt_tokens_details"]["cached_tokens"]
    st = srv.kv_stats()
    assert st["external_hits"] > 0 and cached == 40
    assert took >= st["external_hits"] * 0.001 * 0.9


@pytest.mark.parametrize(("extra", "needle"), [
    ({"cpu_offload_gb": 1.0}, "--cpu-offload-gb needs --enable-prefix-caching"),
    ({"kv_pool_tokens": 8, "page_size": 16}, "holds no page"),
    ({"enable_prefix_caching": True, "fixed_ttft_ms": 1.0, "fixed_itl_ms": 1.0}, "no KV model"),
    ({"enable_prefix_caching": True, "kv_pool_tokens": 1000, "cpu_offload_gb": 1.0,
      "kv_bytes_per_token": 0}, "positive --kv-bytes-per-token"),
])
def test_cache_flags_that_cannot_work_are_refused(extra, needle):
    kw = {"served_model_name": ("m",), "max_model_len": 100, "dp_size": 1, "prefill_tps": 1.0,
          "decode_base_ms": 1.0, "decode_per_seq_ms": 0.0, "max_num_batched_tokens": 10,
          "stream_interval": 1, "fixed_ttft_ms": None, "fixed_itl_ms": None, "fail_rate": 0.0,
          "midstream_error_rate": 0.0, "drop_rate": 0.0, "hang_rate": 0.0,
          "eval_hang_rate": 0.0, "omit_usage": False, "sse_comments": False, "crlf": False,
          "fault_seed": 0, "eval_answer_key": None, "eval_accuracy": 0.9, "eval_seed": 0,
          "enable_prefix_caching": False, "page_size": 16, "kv_pool_tokens": 0,
          "cpu_offload_gb": 0.0, "offload_gbps": 25.0, "dp_routing": "least-loaded",
          "kv_bytes_per_token": 70000, **extra}
    with pytest.raises(InputError, match=needle):
        _build_config("aggregated", 4, kw)
