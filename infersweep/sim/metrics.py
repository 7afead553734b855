"""``sim serve``'s Prometheus ``/metrics``: the engine's counters under vLLM's and SGLang's
names (both families, so a scraper written for either engine reads it), plus the
simulator's own. Counters and gauges are summed over DP ranks (no per-rank label); the KV
usage gauges are the fraction of all ranks' pages in use. Counters are written as
``<name>_total`` in ``# HELP``/``# TYPE`` too, as prometheus_client writes them.
"""

from __future__ import annotations

Row = tuple[str, str, str, list[tuple[str, float]]]  # name, type, help, [(labels, value)]


def render(rows: list[Row]) -> str:
    out = []
    for name, kind, text, samples in rows:
        out.append(f"# HELP {name} {text}\n# TYPE {name} {kind}")
        out.extend(f"{name}{{{labels}}} {_num(value)}" for labels, value in samples)
    return "\n".join(out) + "\n"


def _num(v: float) -> str:
    return str(v) if isinstance(v, int) or v != int(v) else str(int(v))


def metrics_text(server) -> str:
    st = server.stats()
    name = server.cfg.served_model_names[0]
    lab = f'model_name="{name}",role="{server.cfg.role}"'
    running = max(0, st["inflight"] - st["waiting"])

    def one(metric, kind, text, value):
        return (metric, kind, text, [(lab, value)])

    rows = [
        one("vllm:num_requests_running", "gauge", "Requests running on the engine.", running),
        one("vllm:num_requests_waiting", "gauge", "Requests waiting to be admitted.",
            st["waiting"]),
        one("vllm:prompt_tokens_total", "counter", "Prompt tokens of accepted requests.",
            st["prompt_tokens"]),
        one("vllm:generation_tokens_total", "counter", "Generated tokens.",
            st["generation_tokens"]),
        one("vllm:request_success_total", "counter", "Requests finished.", st["success"]),
        one("sglang:num_running_reqs", "gauge", "Running requests.", running),
        one("sglang:num_queue_reqs", "gauge", "Queued requests.", st["waiting"]),
        one("sglang:prompt_tokens_total", "counter", "Prompt tokens.", st["prompt_tokens"]),
        one("sglang:generation_tokens_total", "counter", "Generated tokens.",
            st["generation_tokens"]),
    ]
    kv = st["kv"]
    if kv is not None:
        rows += _kv_rows(kv, lab, one)
    rows += [
        one("infersweep_sim_requests_in_flight", "gauge", "Requests in flight.", st["inflight"]),
        one("infersweep_sim_requests_in_flight_peak", "gauge",
            "Most requests in flight at once since the last reset.", st["peak_inflight"]),
        one("infersweep_sim_requests_rejected_total", "counter", "Requests refused (4xx).",
            st["rejected"]),
        one("infersweep_sim_requests_failed_total", "counter", "Injected failures (5xx).",
            st["failed"]),
        one("infersweep_sim_schedule_lag_max_seconds", "gauge",
            "Largest lateness of a scheduled step.", st["lag_ms_max"] / 1000),
    ]
    return render(rows)


def _kv_rows(kv: dict, lab: str, one) -> list[Row]:
    cached = kv["hits"] + kv["external_hits"]
    rate = cached / kv["queries"] if kv["queries"] else 0.0
    pool = kv["pool_tokens"] or 0
    blocks = pool // kv["page_size"]
    info = (f'{lab},block_size="{kv["page_size"]}",num_gpu_blocks="{blocks}",'
            f'enable_prefix_caching="{kv["prefix_caching"]}"')
    rows = [
        ("vllm:cache_config_info", "gauge", "The KV cache's configuration (0 blocks: unlimited).",
         [(info, 1)]),
        one("vllm:kv_cache_usage_perc", "gauge",
            "Fraction of the KV pool held by requests (1 = full; 0 when unlimited).",
            kv["usage"]),
        one("vllm:prefix_cache_queries_total", "counter",
            "Prompt tokens looked up in the prefix cache.", kv["queries"]),
        one("vllm:prefix_cache_hits_total", "counter",
            "Prompt tokens found in the GPU prefix cache.", kv["hits"]),
        ("vllm:prompt_tokens_by_source_total", "counter",
         "Prompt tokens by where their KV came from.",
         [(f'{lab},source="local_cache_hit"', kv["hits"]),
          (f'{lab},source="external_kv_transfer"', kv["external_hits"]),
          (f'{lab},source="local_compute"', kv["computed"])]),
        one("vllm:num_preemptions_total", "counter",
            "Requests preempted for lack of KV pages (recomputed later).", kv["preemptions"]),
        one("sglang:cached_tokens_total", "counter",
            "Prompt tokens served from a cache (GPU or host tier).", cached),
        one("sglang:cache_hit_rate", "gauge",
            "Cached prompt tokens / prompt tokens looked up, since start.", rate),
        one("sglang:token_usage", "gauge", "Fraction of the KV pool held by requests.",
            kv["usage"]),
        one("sglang:num_used_tokens", "gauge", "KV tokens held by requests.", kv["used_tokens"]),
        one("sglang:max_total_num_tokens", "gauge", "KV pool size in tokens (0: unlimited).",
            pool),
        one("sglang:num_retracted_reqs_total", "counter",
            "Requests retracted for lack of KV pages.", kv["preemptions"]),
    ]
    cpu = kv["cpu_pool_tokens"]
    if cpu:
        rows += [
            one("vllm:external_prefix_cache_queries_total", "counter",
                "Prompt tokens looked up in the CPU tier.", kv["external_queries"]),
            one("vllm:external_prefix_cache_hits_total", "counter",
                "Prompt tokens loaded from the CPU tier.", kv["external_hits"]),
            one("vllm:cpu_cache_usage_perc", "gauge", "Fraction of the CPU tier in use.",
                kv["cpu_used_tokens"] / cpu),
            one("sglang:hicache_host_used_tokens", "gauge", "Tokens in the host KV tier.",
                kv["cpu_used_tokens"]),
            one("sglang:hicache_host_total_tokens", "gauge", "Host KV tier size in tokens.", cpu),
            one("infersweep_sim_kv_offloaded_pages_total", "counter",
                "Pages written from the GPU pool to the CPU tier.", kv["pages_offloaded"]),
            one("infersweep_sim_kv_loaded_pages_total", "counter",
                "Pages loaded from the CPU tier back to the GPU pool.", kv["pages_loaded"]),
        ]
    return rows
