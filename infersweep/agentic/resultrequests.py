"""``request_metrics`` of an agentic result, from the profiling records alone.

Names follow InferenceX's agentic aggregate: latencies in seconds (``ttft``, ``e2el``, ``itl``,
``tpot`` = ``itl``, ``full_response_itl``), interactivity as the inverse of the matching
time statistic (so ``p99_intvty`` is the slow tail, as for fixed-length points), token
distributions, and token throughput over [first request start, last request end].
"""

from __future__ import annotations

import numpy as np

from infersweep.agentic.resultexports import aggregate_number, metric_value

STATS = ("mean", "p50", "p75", "p90", "p95", "p99", "std")
PERCENTILES = {"p50": 50, "p75": 75, "p90": 90, "p95": 95, "p99": 99}
QPS_WINDOW_S = 1.0
# per-request metric (ms) -> result name (s)
TIMES = {"ttft": "time_to_first_token", "e2el": "request_latency",
         "itl": "inter_token_latency", "full_response_itl": "full_response_inter_token_latency"}


def stats(values) -> dict:
    """mean, percentiles (linear, as numpy) and population std; {} for no values."""
    a = np.asarray(list(values), dtype=float)
    if a.size == 0:
        return {}
    out = {"mean": float(a.mean())}
    out |= {k: float(np.percentile(a, q)) for k, q in PERCENTILES.items()}
    out["std"] = float(a.std())
    return out


def _times_s(records: list[dict], name: str) -> list[float]:
    out = []
    for r in records:
        v = metric_value(r, name)
        if isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0:
            out.append(v / 1000.0)
    return out


def _ints(records: list[dict], name: str) -> list[int]:
    out = []
    for r in records:
        v = metric_value(r, name)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            out.append(int(v))
    return out


def _inverse(time_stats: dict, per_request: list[float]) -> dict:
    """Tokens per second per user from a time per token: each statistic is 1 / the time
    statistic; std is over the per-request inverses."""
    out = {k: 1.0 / v for k, v in time_stats.items() if k != "std" and v > 0}
    if per_request:
        out["std"] = float(np.std([1.0 / v for v in per_request]))
    return out


def latency(records: list[dict]) -> dict:
    per = {k: _times_s(records, m) for k, m in TIMES.items()}
    out = {k: stats(v) for k, v in per.items()}
    out["tpot"] = dict(out["itl"])
    out["intvty"] = _inverse(out["itl"], per["itl"])
    out["full_response_intvty"] = _inverse(out["full_response_itl"], per["full_response_itl"])
    # end to end per output token: what a user waits per token, first token included
    e2e_per_token = []
    for r in records:
        e2el, osl = metric_value(r, "request_latency"), metric_value(r, "output_sequence_length")
        if isinstance(e2el, (int, float)) and isinstance(osl, (int, float)) and e2el > 0 \
                and osl > 0:
            e2e_per_token.append(e2el / 1000.0 / osl)
    out["e2e_norm_intvty"] = _inverse(stats(e2e_per_token), e2e_per_token)
    return {k: out[k] for k in ("ttft", "e2el", "itl", "tpot", "intvty", "e2e_norm_intvty",
                                "full_response_itl", "full_response_intvty")}


def qps(records: list[dict]) -> dict:
    """Completions per 1 s window from the first completion to the last."""
    ends = sorted(r["metadata"]["request_end_ns"] / 1e9 for r in records)
    out = {"window_seconds": QPS_WINDOW_S, "samples": 0}
    if len(ends) < 2 or ends[-1] <= ends[0]:
        return out
    edges = np.arange(ends[0], ends[-1] - QPS_WINDOW_S + 1e-9, QPS_WINDOW_S)
    if edges.size == 0:
        return out | {"mean": len(ends) / (ends[-1] - ends[0])}
    counts = np.searchsorted(ends, edges + QPS_WINDOW_S, "left") - np.searchsorted(
        ends, edges, "left")
    return out | {"samples": int(edges.size)} | stats(counts / QPS_WINDOW_S)


def expected_output(records: list[dict]) -> list[int]:
    """What each request asked for (max tokens), from aiperf's signed mismatch percentage
    ``(actual - requested) / requested * 100``."""
    out = []
    for r in records:
        actual, diff = (metric_value(r, "output_sequence_length"),
                        metric_value(r, "osl_mismatch_diff_pct"))
        if isinstance(actual, (int, float)) and isinstance(diff, (int, float)) and diff > -100:
            out.append(round(actual / (1 + diff / 100.0)))
    return out


def _distribution(values: list[int]) -> dict:
    return stats(values) | ({"total": int(sum(values))} if values else {})


def tokens(records: list[dict]) -> dict:
    return {"input": _distribution(_ints(records, "input_sequence_length")),
            "output_actual": _distribution(_ints(records, "output_sequence_length")),
            "output_expected": _distribution(expected_output(records))}


def throughput(records: list[dict], gpus: int) -> dict:
    """Tokens per second over [min start, max end] of the profiling records, and per GPU."""
    if not records:
        return {"duration_seconds": None, "input": {"tokens_per_second": None},
                "output": {"tokens_per_second": None}, "total": {"tokens_per_second": None},
                "per_gpu": {}}
    start = min(r["metadata"]["request_start_ns"] for r in records)
    end = max(r["metadata"]["request_end_ns"] for r in records)
    duration = (end - start) / 1e9
    tin = sum(_ints(records, "input_sequence_length"))
    tout = sum(_ints(records, "output_sequence_length"))
    rate = (lambda n: n / duration) if duration > 0 else (lambda n: None)
    out = {"duration_seconds": duration, "input": {"tokens_per_second": rate(tin)},
           "output": {"tokens_per_second": rate(tout)},
           "total": {"tokens_per_second": rate(tin + tout)}, "per_gpu": {}}
    if duration > 0 and gpus > 0:
        out["per_gpu"] = {"total_tput_tps": rate(tin + tout) / gpus,
                          "output_tput_tps": rate(tout) / gpus,
                          "input_tput_tps": rate(tin) / gpus}
    return out


def theoretical_hit_rate(aggregate: dict) -> float | None:
    """aiperf's client-side prefix hit rate from the traces' block ids: hit blocks over
    blocks (its ``sum`` over ``count``), else its average percentage."""
    hits = aggregate_number(aggregate, "theoretical_prefix_cache_hit", "sum")
    blocks = aggregate_number(aggregate, "theoretical_prefix_cache_hit", "count")
    if hits is not None and blocks:
        return hits / blocks
    avg = aggregate_number(aggregate, "theoretical_prefix_cache_hit")
    return None if avg is None else avg / 100.0


def request_metrics(records: list[dict], aggregate: dict, gpus: int) -> dict:
    return {"qps": qps(records), "latency": latency(records), "tokens": tokens(records),
            "throughput": throughput(records, gpus),
            "cache": {"theoretical_cache_hit_rate": theoretical_hit_rate(aggregate)}}
