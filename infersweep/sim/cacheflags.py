"""A recipe's engine flags -> the ``sim serve`` flags of the same KV cache.

Pure: no I/O, no defaults taken from the environment. ``engine_args`` are the recipe's engine
flags as a mapping; keys may carry leading dashes and use ``_`` or ``-``. Flag values may be
booleans, numbers or strings (``"true"``), and a ``kv-transfer-config`` a dict or its JSON.

What is mapped (per DP rank, as ``sim serve`` counts its KV model):

* prefix caching: vLLM on unless ``no-enable-prefix-caching`` (or
  ``enable-prefix-caching: false``); SGLang on unless ``disable-radix-cache``; TRT-LLM on
  unless ``kv_cache_config.enable_block_reuse`` is false.
* page size: vLLM ``block-size`` (default 16), SGLang ``page-size`` (default 1), TRT-LLM
  ``tokens_per_block`` (default 32).
* GPU pool: only an explicit token count: vLLM ``num-gpu-blocks-override`` x block size,
  SGLang ``max-total-tokens``, else the caller's ``pool_tokens``. ``gpu-memory-utilization`` /
  ``mem-fraction-static`` are not mapped: the tokens they leave for KV depend on the GPU's
  memory and the model's weights, which a recipe does not state; without a pool the cache is
  unlimited.
* CPU tier (only with a pool, since pages reach it by eviction): vLLM ``kv-transfer-config``
  naming an offloading connector (SimpleCPUOffload, Offloading, LMCache, Mooncake) or
  ``kv-offloading-size``; SGLang ``enable-hierarchical-cache``. Its size is
  ``total_cpu_dram_gb / dp_size`` when the row has a DRAM budget, else the recipe's own
  figure: ``cpu_bytes_to_use_per_rank`` x ``tp_size`` (per GPU), ``kv-offloading-size`` (GiB,
  summed over TP), ``hicache-size`` x ``tp_size`` / ``dp_size`` (GB per GPU), or
  ``hicache-ratio`` x the pool.
"""

from __future__ import annotations

import json

GIB = 2 ** 30
OFFLOAD_CONNECTORS = ("offload", "lmcache", "mooncake")


def _norm(args: dict) -> dict:
    return {str(k).lstrip("-").replace("_", "-").lower(): v for k, v in args.items()}


def _truthy(v) -> bool:
    if isinstance(v, str):
        return v.strip().lower() not in ("false", "0", "no", "off")
    return v is None or bool(v)  # a flag given without a value is on


def _num(v, what: str) -> float:
    try:
        return float(v)
    except (TypeError, ValueError):
        raise ValueError(f"engine flag {what}: expected a number, got {v!r}") from None


def _find(obj, key: str):
    """The first value of ``key`` anywhere in nested dicts."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k == key:
                return v
            found = _find(v, key)
            if found is not None:
                return found
    return None


def _transfer_config(v) -> dict:
    if isinstance(v, str):
        try:
            v = json.loads(v)
        except json.JSONDecodeError:
            raise ValueError(f"engine flag kv-transfer-config is not JSON: {v!r}") from None
    return v if isinstance(v, dict) else {}


def cache_flags(engine_args: dict, *, framework: str, total_cpu_dram_gb: float = 0.0,
                dp_size: int = 1, tp_size: int = 1, pool_tokens: int | None = None,
                kv_bytes_per_token: int | None = None) -> list[str]:
    """``sim serve`` flags for the KV cache ``engine_args`` configure (module docstring)."""
    a = _norm(engine_args)
    fw = framework.lower()
    dp = max(1, dp_size)
    if "sglang" in fw:
        caching = not _truthy(a["disable-radix-cache"]) if "disable-radix-cache" in a else True
        page = int(_num(a.get("page-size", 1), "page-size"))
        if "max-total-tokens" in a:
            pool_tokens = int(_num(a["max-total-tokens"], "max-total-tokens"))
        offload = "enable-hierarchical-cache" in a and _truthy(a["enable-hierarchical-cache"])
        own_gb = None
        if "hicache-size" in a and _num(a["hicache-size"], "hicache-size") > 0:
            own_gb = _num(a["hicache-size"], "hicache-size") * tp_size / dp
        elif "hicache-ratio" in a and pool_tokens:
            tokens = _num(a["hicache-ratio"], "hicache-ratio") * pool_tokens
            own_gb = tokens * (kv_bytes_per_token or 70_000) / 1e9
    elif "vllm" in fw or "atom" in fw:
        caching = True
        if "no-enable-prefix-caching" in a:
            caching = not _truthy(a["no-enable-prefix-caching"])
        elif "enable-prefix-caching" in a:
            caching = _truthy(a["enable-prefix-caching"])
        page = int(_num(a.get("block-size", 16), "block-size"))
        if "num-gpu-blocks-override" in a:
            pool_tokens = int(_num(a["num-gpu-blocks-override"], "num-gpu-blocks-override")) * page
        transfer = _transfer_config(a.get("kv-transfer-config"))
        connector = str(transfer.get("kv_connector", "")).lower()
        offload = any(c in connector for c in OFFLOAD_CONNECTORS) or "kv-offloading-size" in a
        own_gb = None
        per_rank = _find(transfer, "cpu_bytes_to_use_per_rank")
        if per_rank is not None:
            own_gb = _num(per_rank, "cpu_bytes_to_use_per_rank") * tp_size / 1e9
        elif "kv-offloading-size" in a:
            own_gb = _num(a["kv-offloading-size"], "kv-offloading-size") * GIB / 1e9
    elif "trt" in fw:
        kvc = a.get("kv-cache-config") if isinstance(a.get("kv-cache-config"), dict) else {}
        caching = _truthy(kvc.get("enable_block_reuse", True))
        page = int(_num(a.get("tokens-per-block", kvc.get("tokens_per_block", 32)),
                        "tokens_per_block"))
        offload, own_gb = False, None
    else:
        return []
    if page < 1:
        raise ValueError(f"engine page/block size must be positive, got {page}")
    flags = ["--page-size", str(page)]
    if caching:
        flags.insert(0, "--enable-prefix-caching")
    if pool_tokens:
        flags += ["--kv-pool-tokens", str(int(pool_tokens))]
    if caching and pool_tokens and offload:
        gb = total_cpu_dram_gb / dp if total_cpu_dram_gb > 0 else own_gb
        if gb:
            flags += ["--cpu-offload-gb", f"{gb:g}"]
            if kv_bytes_per_token:
                flags += ["--kv-bytes-per-token", str(kv_bytes_per_token)]
    return flags
