"""Measured, not asserted: a coding-agent-shaped workload against the simulator's KV model.

Each case replays the same sessions in-process and reads the hit rate from the server's
own /metrics text, as a scraper would.
"""

import asyncio

import pytest

from infersweep.sim.kvcache import KVConfig
from infersweep.sim.model import ModelParams
from infersweep.sim.server import SimConfig, SimServer
from tests.unit.sim.agenticload import replay, sessions, theoretical_hit_rate

PAGE = 16
WORK = sessions(n_sessions=6, turns=8)
WORKING_SET = sum(len(ps[-1].split()) for ps in WORK)


def measure(kv: KVConfig, dp_size: int = 1, dp_routing: str = "least-loaded") -> dict:
    params = ModelParams(prefill_tps=50_000.0, decode_base_ms=1.0, decode_per_seq_ms=0.0, kv=kv)

    async def go():
        srv = SimServer(SimConfig(served_model_names=["m"], model=params, dp_size=dp_size,
                                  dp_routing=dp_routing, keep_truth=False))
        try:
            return await replay(srv, WORK)
        finally:
            for e in srv.ranks:
                e.task.cancel()

    out = asyncio.run(go())
    m = out["metrics"]
    out["hit_rate"] = m["vllm:prefix_cache_hits_total"] / m["vllm:prefix_cache_queries_total"]
    out["cached_rate"] = m["sglang:cached_tokens_total"] / m["vllm:prefix_cache_queries_total"]
    return out


@pytest.fixture(scope="module")
def ample():
    return measure(KVConfig(prefix_caching=True, page_size=PAGE))


@pytest.fixture(scope="module")
def cut():
    return measure(KVConfig(prefix_caching=True, page_size=PAGE, pool_tokens=WORKING_SET // 3))


def test_with_ample_kv_the_hit_rate_is_the_theoretical_one(ample):
    theory = theoretical_hit_rate(WORK, PAGE)
    assert 0.6 < theory < 0.95  # the workload is shaped as intended
    assert ample["hit_rate"] == pytest.approx(theory, abs=0.05)
    m = ample["metrics"]
    # every response's usage reported its cached tokens, and they add up to the counter
    assert ample["cached_tokens"] == m["sglang:cached_tokens_total"] == m[
        "vllm:prefix_cache_hits_total"]
    assert m['vllm:prompt_tokens_by_source_total'] == m["vllm:prefix_cache_queries_total"]
    assert m["vllm:num_preemptions_total"] == 0


def test_a_pool_cut_below_the_working_set_loses_hits_and_ttft(ample, cut):
    assert cut["hit_rate"] < ample["hit_rate"] - 0.1
    assert cut["mean_ttft_ms"] > ample["mean_ttft_ms"]
    assert cut["metrics"]["vllm:kv_cache_usage_perc"] <= 1.0


def test_a_dram_tier_recovers_part_of_the_lost_hits(ample, cut):
    dram = measure(KVConfig(prefix_caching=True, page_size=PAGE, pool_tokens=WORKING_SET // 3,
                            cpu_tokens=WORKING_SET // 3, kv_bytes_per_token=70_000,
                            offload_gbps=25.0))
    m = dram["metrics"]
    assert m["vllm:external_prefix_cache_hits_total"] > 0
    assert m["vllm:external_prefix_cache_queries_total"] == m["vllm:prefix_cache_queries_total"]
    assert cut["cached_rate"] < dram["cached_rate"] <= ample["cached_rate"] + 0.01
    assert m['vllm:prompt_tokens_by_source_total{model_name="m",role="aggregated",'
             'source="external_kv_transfer"}'] == m["vllm:external_prefix_cache_hits_total"]


def test_dp_ranks_without_session_affinity_lose_hits():
    kv = KVConfig(prefix_caching=True, page_size=PAGE)
    spread = measure(kv, dp_size=4, dp_routing="least-loaded")
    sticky = measure(kv, dp_size=4, dp_routing="session")
    assert spread["hit_rate"] < sticky["hit_rate"] - 0.1
    assert sticky["hit_rate"] == pytest.approx(theoretical_hit_rate(WORK, PAGE), abs=0.05)
