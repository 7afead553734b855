"""``server_metrics`` of an agentic result: the engine's own counters over the profiling window.

aiperf's ``server_metrics_export.json`` already holds each counter as its delta over the
window (``stats.total``, per series) and each gauge's ``avg``/``max``; a family is keyed by
its name without Prometheus's ``_total``. One small adapter per engine family reads the names
that family uses; what it cannot find stays null. The family a row must expose (the gate's
``required_prefix``) follows from its framework.
"""

from __future__ import annotations

from infersweep.agentic.resultexports import PROFILING

# framework (by its first word) -> the metric prefix its engine exposes, as InferenceX requires
# it per launch script (AIPERF_REQUIRED_SERVER_METRIC_PREFIX)
REQUIRED_PREFIX = {"vllm": "vllm:", "sglang": "sglang:", "atom": "atom:"}
DYNAMO = {"dynamo-vllm": "vllm:", "dynamo-sglang": "sglang:"}


def required_prefix(framework: str | None) -> str | None:
    """The metric prefix a row of ``framework`` must show (None: no family is known)."""
    fw = (framework or "").lower()
    for name, prefix in DYNAMO.items():
        if fw.startswith(name):
            return prefix
    for name, prefix in REQUIRED_PREFIX.items():
        if fw.startswith(name):
            return prefix
    return None


def _series(metrics: dict, name: str, label: tuple[str, str] | None = None) -> list[dict]:
    fam = metrics.get(name)
    out = fam.get("series", []) if isinstance(fam, dict) else []
    out = [s for s in out if isinstance(s, dict) and isinstance(s.get("stats"), dict)]
    if label is not None:
        out = [s for s in out if (s.get("labels") or {}).get(label[0]) == label[1]]
    return out


def _num(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def counter(metrics: dict, name: str, label: tuple[str, str] | None = None) -> float | None:
    """A counter's increase over the window, summed over its series (engines, ranks)."""
    vals = [s["stats"].get("total") for s in _series(metrics, name, label)]
    vals = [v for v in vals if _num(v)]
    return float(sum(vals)) if vals else None


def by_label(metrics: dict, name: str, label: str) -> dict[str, float]:
    """A counter's increase per value of one label, summed over the other labels."""
    out: dict[str, float] = {}
    for s in _series(metrics, name):
        key, v = (s.get("labels") or {}).get(label), s["stats"].get("total")
        if key is not None and _num(v):
            out[str(key)] = out.get(str(key), 0.0) + float(v)
    return dict(sorted(out.items()))


def gauge(metrics: dict, name: str, stat: str = "max", combine=max) -> float | None:
    vals = [s["stats"].get(stat) for s in _series(metrics, name)]
    vals = [v for v in vals if _num(v)]
    return float(combine(vals)) if vals else None


def _mean(values):
    return sum(values) / len(values)


def _rate(part, whole) -> float | None:
    return part / whole if part is not None and whole else None


def _whole(v) -> int | None:
    return None if v is None else int(round(v))


def empty(present: bool, count: int) -> dict:
    return {
        "present": present, "adapter": "none", "metric_count": count,
        "cache": {"gpu_cache_hit_rate": None, "cpu_cache_hit_rate": None,
                  "external_cache_hit_rate": None, "overall_cache_hit_rate": None,
                  "prefix_cache_hits": None, "prefix_cache_queries": None,
                  "external_prefix_cache_hits": None, "external_prefix_cache_queries": None,
                  "cached_tokens_by_source": {}},
        "kv_cache": {"gpu_usage_pct": None, "cpu_usage_pct": None, "cpu_used_tokens": None,
                     "cpu_total_tokens": None, "gpu_total_tokens": None},
        "tokens": {"prompt_total": None, "generation_total": None,
                   "prompt_by_source": {"gpu_cache_hit": None, "cpu_or_external_cache_hit": None,
                                        "computed": None, "raw": {}}},
    }


def _vllm(m: dict, out: dict) -> None:
    c, kv, tok = out["cache"], out["kv_cache"], out["tokens"]
    tok["prompt_total"] = _whole(counter(m, "vllm:prompt_tokens"))
    tok["generation_total"] = _whole(counter(m, "vllm:generation_tokens"))
    c["prefix_cache_hits"] = counter(m, "vllm:prefix_cache_hits")
    c["prefix_cache_queries"] = counter(m, "vllm:prefix_cache_queries")
    c["external_prefix_cache_hits"] = counter(m, "vllm:external_prefix_cache_hits")
    c["external_prefix_cache_queries"] = counter(m, "vllm:external_prefix_cache_queries")
    c["gpu_cache_hit_rate"] = _rate(c["prefix_cache_hits"], c["prefix_cache_queries"])
    c["external_cache_hit_rate"] = _rate(c["external_prefix_cache_hits"],
                                         c["external_prefix_cache_queries"])
    c["cpu_cache_hit_rate"] = c["external_cache_hit_rate"]
    c["overall_cache_hit_rate"] = c["gpu_cache_hit_rate"]
    source = by_label(m, "vllm:prompt_tokens_by_source", "source")
    if source and sum(source.values()) > 0:
        # prompt tokens by where they came from: the one split of a prompt that adds up
        whole = sum(source.values())
        local, ext = source.get("local_cache_hit"), source.get("external_kv_transfer")
        if local is not None:
            c["gpu_cache_hit_rate"] = local / whole
        if ext is not None:
            c["cpu_cache_hit_rate"] = c["external_cache_hit_rate"] = ext / whole
        c["overall_cache_hit_rate"] = ((local or 0.0) + (ext or 0.0)) / whole
        tok["prompt_by_source"] = {"gpu_cache_hit": local, "cpu_or_external_cache_hit": ext,
                                   "computed": source.get("local_compute"), "raw": source}
    kv["gpu_usage_pct"] = gauge(m, "vllm:kv_cache_usage_perc")
    if kv["gpu_usage_pct"] is None:
        kv["gpu_usage_pct"] = gauge(m, "vllm:gpu_cache_usage_perc")
    kv["cpu_usage_pct"] = gauge(m, "vllm:cpu_kv_cache_usage_perc")
    kv["gpu_total_tokens"] = _vllm_pool(m)


def _vllm_pool(m: dict) -> int | None:
    """GPU KV pool in tokens from ``vllm:cache_config_info`` (labels num_gpu_blocks and
    block_size), summed over engines."""
    total = 0
    for s in _series(m, "vllm:cache_config_info"):
        lab = s.get("labels") or {}
        try:
            total += int(lab["num_gpu_blocks"]) * int(lab["block_size"])
        except (KeyError, TypeError, ValueError):
            continue
    return total or None


def _sglang(m: dict, out: dict) -> None:
    c, kv, tok = out["cache"], out["kv_cache"], out["tokens"]
    prompt = counter(m, "sglang:prompt_tokens")
    tok["prompt_total"] = _whole(prompt)
    tok["generation_total"] = _whole(counter(m, "sglang:generation_tokens"))
    cached = by_label(m, "sglang:cached_tokens", "cache_source")
    if not cached and (total := counter(m, "sglang:cached_tokens")) is not None:
        # one unlabelled counter: every cached token, GPU and host tier alike; with no host
        # tier they are all GPU hits
        host_tier = gauge(m, "sglang:hicache_host_total_tokens")
        cached = {"all": total} if host_tier else {"device": total}
    device, host = cached.get("device"), cached.get("host")
    c["cached_tokens_by_source"] = cached
    c["gpu_cache_hit_rate"] = _rate(device, prompt)
    c["cpu_cache_hit_rate"] = _rate(host, prompt)
    c["overall_cache_hit_rate"] = _rate(sum(cached.values()), prompt) if cached else None
    if c["overall_cache_hit_rate"] is None:
        c["overall_cache_hit_rate"] = gauge(m, "sglang:cache_hit_rate", "avg", _mean)
    kv["gpu_usage_pct"] = gauge(m, "sglang:token_usage")
    kv["cpu_used_tokens"] = gauge(m, "sglang:hicache_host_used_tokens")
    kv["cpu_total_tokens"] = gauge(m, "sglang:hicache_host_total_tokens")
    kv["cpu_usage_pct"] = _rate(kv["cpu_used_tokens"], kv["cpu_total_tokens"])
    pool = gauge(m, "sglang:max_total_num_tokens", "max", sum)
    kv["gpu_total_tokens"] = _whole(pool)
    if cached:
        tok["prompt_by_source"] = {"gpu_cache_hit": device, "cpu_or_external_cache_hit": host,
                                   "computed": None if prompt is None
                                   else prompt - sum(cached.values()), "raw": cached}


ADAPTERS = {"vllm:": ("vllm", _vllm), "sglang:": ("sglang", _sglang)}


def flat(nested: dict) -> dict:
    """InferenceX's flat names for the same numbers."""
    c, kv, tok = nested["cache"], nested["kv_cache"], nested["tokens"]
    return {"total_prompt_tokens": tok["prompt_total"],
            "total_generation_tokens": tok["generation_total"],
            "server_gpu_cache_hit_rate": c["gpu_cache_hit_rate"],
            "server_cpu_cache_hit_rate": c["cpu_cache_hit_rate"],
            "server_external_cache_hit_rate": c["external_cache_hit_rate"],
            "server_overall_cache_hit_rate": c["overall_cache_hit_rate"],
            "gpu_kv_cache_usage_pct": kv["gpu_usage_pct"],
            "cpu_kv_cache_usage_pct": kv["cpu_usage_pct"]}


def server_metrics(export: dict | None, framework: str | None) -> dict:
    """The result's ``server_metrics`` from aiperf's export (None: no scrape)."""
    metrics = (export or {}).get("metrics")
    metrics = metrics if isinstance(metrics, dict) else {}
    out = empty(bool(metrics), len(metrics))
    want = required_prefix(framework)
    summary = (export or {}).get("summary") or {}
    window = (summary.get("phase_time_ranges") or {}).get(PROFILING) or {}
    out |= {"required_prefix": want,
            "required_prefix_present": None if want is None
            else any(str(n).startswith(want) for n in metrics),
            "metrics_phase": (export or {}).get("metrics_phase"),
            "window_ns": {"start": window.get("start_ns"), "end": window.get("end_ns")},
            "endpoints": sorted(summary.get("endpoints_successful") or [])}
    found = [p for p in ADAPTERS if any(str(n).startswith(p) for n in metrics)]
    # the row's own family first; a router's or sidecar's families do not decide
    prefix = want if want in found else (found[0] if found else None)
    if prefix is not None:
        name, fill = ADAPTERS[prefix]
        out["adapter"] = name
        fill(metrics, out)
    elif want is not None and out["required_prefix_present"]:
        out["adapter"] = want.rstrip(":")  # present, but no cache names known for it
    return out | flat(out)
