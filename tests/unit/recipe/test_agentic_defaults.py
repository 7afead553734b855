"""Agentic-coding rows through the framework defaults: vLLM and ATOM single-node (prefix
caching, DRAM offload backends, what they refuse) and the disaggregated SGLang and ATOM
defaults (only prefill offloads, the replay per concurrency)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from infersweep.diagnostics import InputError
from infersweep.recipe import rowexpr
from infersweep.recipe.render import render_row

REPO = Path(__file__).resolve().parents[3]


def single(framework: str, **changes) -> dict:
    row = {"image": "img:1", "model": "org/Model", "model-prefix": "dsv4", "precision": "fp4",
           "framework": framework, "runner": "cluster:mi355x-amds", "tp": 8, "pp": 1,
           "dcp-size": 1, "pcp-size": 1, "ep": 1, "dp-attn": False, "spec-decoding": "none",
           "conc": 16, "kv-offloading": "none", "total-cpu-dram-gb": 0, "duration": 3600,
           "exp-name": "dsv4_tp8_conc16_kvnone", "scenario-type": "agentic-coding",
           "run-eval": False}
    return {**row, **changes}


def dram(framework: str, backend: str, gb: int = 2400, **changes) -> dict:
    return single(framework, **{"kv-offloading": "dram", "total-cpu-dram-gb": gb,
                                "kv-offload-backend": {"name": backend}, **changes})


def engine(rendered, role: str = "aggregated") -> dict:
    backend = rendered.recipe["backend"]
    return backend[f"{backend['type']}_config"][role]


def refused(row: dict) -> str:
    with pytest.raises(InputError) as exc:
        render_row(row, REPO)
    return "\n".join(str(d) for d in exc.value.diagnostics)


def test_vllm_default_caches_prefixes_at_native_context():
    r = render_row(single("vllm", **{"spec-decoding": "mtp"}), REPO)
    assert r.config_file == "benchmarks/single_node/srt-slurm/agentic/defaults/vllm.yaml"
    cfg = engine(r)
    assert cfg["enable-prefix-caching"] is True and cfg["block-size"] == 64
    assert cfg["max-num-batched-tokens"] == 8192 and "max-model-len" not in cfg
    assert json.loads(cfg["speculative-config"])["method"] == "mtp"
    assert "kv-transfer-config" not in cfg
    assert r.recipe["backend"]["aggregated_environment"]["PYTHONHASHSEED"] == "42"
    assert r.recipe["frontend"]["type"] == "vllm"
    assert "agentic replay" in r.recipe["benchmark"]["command"]


def test_vllm_simple_offloads_the_budget_split_over_the_gpus():
    cfg = engine(render_row(dram("vllm", "vllm-simple", gb=2400, tp=4), REPO))
    transfer = json.loads(cfg["kv-transfer-config"])
    assert transfer["kv_connector"] == "SimpleCPUOffloadConnector"
    assert transfer["kv_connector_extra_config"]["cpu_bytes_to_use_per_rank"] == 600 * 10**9


def test_vllm_native_lmcache_and_mooncake_backends():
    native = engine(render_row(dram("vllm", "vllm-native", gb=1000), REPO))
    assert native["kv-offloading-backend"] == "native"
    assert native["kv-offloading-size"] == 931  # GiB of the 1,000 GB budget
    lm = render_row(dram("vllm", "lmcache", gb=800), REPO)
    assert json.loads(engine(lm)["kv-transfer-config"])["kv_connector"] == "LMCacheConnectorV1"
    assert lm.recipe["backend"]["aggregated_environment"]["LMCACHE_MAX_LOCAL_CPU_SIZE"] == "100.0"
    mc = render_row(dram("vllm", "mooncake", gb=800), REPO)
    assert json.loads(engine(mc)["kv-transfer-config"])["kv_connector"] == "MooncakeStoreConnector"
    store = mc.recipe["backend"]["mooncake_kv_store"]["store_config"]
    assert store["global_segment_size"] == "100GB"


def test_vllm_default_refuses_dp_attention_and_other_backends():
    assert "session" in refused(single("vllm", **{"dp-attn": True}))
    assert "vllm-simple, vllm-native, lmcache or mooncake" in refused(dram("vllm", "hicache"))


def test_atom_default_caches_prefixes_and_refuses_dram():
    r = render_row(single("atom", **{"spec-decoding": "mtp", "dp-attn": True}), REPO)
    cfg = engine(r)
    assert cfg["enable_prefix_caching"] is True and "max-model-len" not in cfg
    assert cfg["enable-dp-attention"] is True and cfg["method"] == "mtp"
    assert "does not offload KV to DRAM" in refused(dram("atom", "lmcache"))


def test_cluster_label_names_its_gpu():
    assert rowexpr.gpu_of("cluster:mi355x-amds") == "mi355x"
    assert rowexpr.gpu_of("mi355x-disagg") == "mi355x"


def multi(framework: str, **changes) -> dict:
    row = {"image": "img:1", "model": "org/Model", "model-prefix": "dsv4", "precision": "fp4",
           "framework": framework, "runner": "cluster:mi355x-amds", "spec-decoding": "none",
           "prefill": {"num-worker": 1, "tp": 8, "pp": 1, "dcp-size": 1, "pcp-size": 1,
                       "ep": 1, "dp-attn": False, "additional-settings": ["PREFILL_NODES=1"]},
           "decode": {"num-worker": 1, "tp": 8, "pp": 1, "dcp-size": 1, "pcp-size": 1,
                      "ep": 1, "dp-attn": False, "additional-settings": ["DECODE_NODES=1"]},
           "conc": [8], "kv-offloading": "none", "total-cpu-dram-gb": 0, "duration": 3600,
           "exp-name": "dsv4_p1x8_d1x8_conc8", "disagg": True,
           "scenario-type": "agentic-coding", "kv-p2p-transfer": "mooncake", "run-eval": False}
    return {**row, **changes}


def test_sglang_disagg_offloads_only_prefill_and_replays():
    row = multi("sglang-disagg", **{"kv-offloading": "dram", "total-cpu-dram-gb": 2400,
                                    "kv-offload-backend": {"name": "hicache"}})
    row["prefill"]["additional-settings"].append("CLIENT_IMAGE=client:2")
    r = render_row(row, REPO)
    assert r.config_file == "benchmarks/multi_node/srt-slurm/agentic/defaults/sglang-disagg.yaml"
    prefill, decode = engine(r, "prefill"), engine(r, "decode")
    assert prefill["enable-hierarchical-cache"] is True and prefill["hicache-size"] == 300
    assert "enable-hierarchical-cache" not in decode and decode["page-size"] == 64
    assert "context-length" not in prefill
    assert r.recipe["frontend"]["args"]["policy"] == "consistent_hashing"
    bench = r.recipe["benchmark"]
    assert bench["container_image"] == "client:2"
    assert bench["command"].count("agentic replay") == 1 and "--conc 8" in bench["command"]


def test_atom_disagg_agentic_renders_and_refuses_dram():
    r = render_row(multi("atom-disagg"), REPO)
    assert r.config_file == "benchmarks/multi_node/srt-slurm/agentic/defaults/atom-disagg.yaml"
    assert engine(r, "prefill")["enable_prefix_caching"] is True
    assert "max-model-len" not in engine(r, "decode")
    row = multi("atom-disagg", **{"kv-offloading": "dram", "total-cpu-dram-gb": 100,
                                  "kv-offload-backend": {"name": "mooncake"}})
    assert "does not offload prefill's KV" in refused(row)
