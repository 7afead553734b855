"""A recipe's engine flags mapped to the simulator's KV-cache flags."""

import json

import pytest

from infersweep.sim.cacheflags import cache_flags


def test_vllm_defaults_to_prefix_caching_with_16_token_blocks():
    assert cache_flags({}, framework="vllm") == ["--enable-prefix-caching", "--page-size", "16"]
    assert cache_flags({"--no-enable-prefix-caching": True}, framework="vllm") == [
        "--page-size", "16"]
    assert cache_flags({"enable_prefix_caching": "false", "block-size": 128},
                       framework="vllm") == ["--page-size", "128"]


def test_vllm_cpu_offload_connector_with_a_pool_gets_the_rows_dram_per_dp_rank():
    args = {"enable-prefix-caching": True, "block-size": 256, "num-gpu-blocks-override": 1000,
            "kv-transfer-config": json.dumps({
                "kv_connector": "SimpleCPUOffloadConnector", "kv_role": "kv_both",
                "kv_connector_extra_config": {"cpu_bytes_to_use_per_rank": 100e9}})}
    assert cache_flags(args, framework="vllm", total_cpu_dram_gb=1600, dp_size=8, tp_size=1) == [
        "--enable-prefix-caching", "--page-size", "256", "--kv-pool-tokens", "256000",
        "--cpu-offload-gb", "200"]
    # no DRAM budget on the row: the connector's own per-GPU bytes, times the GPUs of a rank
    flags = cache_flags(args, framework="vllm", tp_size=4, kv_bytes_per_token=50000)
    assert flags[-4:] == ["--cpu-offload-gb", "400", "--kv-bytes-per-token", "50000"]


def test_a_cpu_tier_needs_a_pool_to_be_filled():
    args = {"kv-transfer-config": {"kv_connector": "LMCacheConnectorV1"}}
    assert "--cpu-offload-gb" not in cache_flags(args, framework="vllm", total_cpu_dram_gb=100)
    assert "--cpu-offload-gb" in cache_flags(args, framework="vllm", total_cpu_dram_gb=100,
                                             pool_tokens=10_000)


def test_sglang_page_size_radix_cache_and_hicache():
    assert cache_flags({}, framework="sglang") == ["--enable-prefix-caching", "--page-size", "1"]
    assert cache_flags({"disable-radix-cache": True, "page-size": 64}, framework="sglang") == [
        "--page-size", "64"]
    args = {"page-size": 64, "max-total-tokens": 500_000, "enable-hierarchical-cache": True,
            "hicache-size": 150, "hicache-write-policy": "write_through_selective"}
    assert cache_flags(args, framework="sglang", tp_size=4, dp_size=2) == [
        "--enable-prefix-caching", "--page-size", "64", "--kv-pool-tokens", "500000",
        "--cpu-offload-gb", "300"]
    assert cache_flags(args, framework="sglang", total_cpu_dram_gb=1200, tp_size=4, dp_size=2)[
        -1] == "600"


def test_other_frameworks_and_bad_values():
    assert cache_flags({}, framework="trt") == ["--enable-prefix-caching", "--page-size", "32"]
    assert cache_flags({"kv_cache_config": {"enable_block_reuse": False}}, framework="trtllm") == [
        "--page-size", "32"]
    assert cache_flags({}, framework="something-else") == []
    with pytest.raises(ValueError, match="block-size"):
        cache_flags({"block-size": "big"}, framework="vllm")
    with pytest.raises(ValueError, match="not JSON"):
        cache_flags({"kv-transfer-config": "{oops"}, framework="vllm")
