"""Metric math, with InferenceX's definitions (all times from per-request records).

Per request (times relative to the dispatch instant ``start``; a chunk is an event with
non-empty ``choices``, and ``chunk_tokens`` says how many tokens each carries: see
:mod:`infersweep.bench.stream`):
  TTFT = the first chunk that carries a token - start (not a role-only first delta, which an
  engine may send before prefill);  E2EL = last chunk - start (chat: last event, usage chunk
  included, as InferenceX);  TPOT = (E2EL - TTFT) / (output_tokens - 1) when > 1 token;
  chunk gaps = gaps between consecutive chunks (InferenceX's "ITL");
  per-token ITL = from the first token on, the time from one token-carrying chunk to the next,
  divided evenly over the tokens the later one carries (a count it does not say is one). A
  chunk that carries none (an empty final chunk) is no token gap. Aggregates use successful
  requests only; std is the population std; percentiles use numpy's linear interpolation
  (without numpy, :mod:`infersweep.bench.purestats` computes the same numbers, bit for bit).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from infersweep.bench import purestats
from infersweep.bench.options import METRICS  # one list of metric names (options needs no numpy)
from infersweep.bench.runtime import numpy as np


@dataclass
class RequestMetrics:
    ttft: float
    e2el: float
    tpot: float | None
    chunk_gaps: list[float] = field(default_factory=list)
    token_itls: list[float] = field(default_factory=list)


def chunk_times(rec: dict) -> list[float]:
    """Absolute (run-relative, seconds) arrival times of the token chunks of one record."""
    out = []
    t = rec["start_s"]
    for d in rec.get("chunk_gaps_us") or []:
        t += d / 1e6
        out.append(t)
    return out


def first_token_index(toks) -> int | None:
    """Index of the first chunk that carries a token (None: no chunk does). Without per-chunk
    counts (``toks`` empty or None: records of older versions) every chunk carries one."""
    if not toks:
        return 0
    for j, k in enumerate(toks):
        if k != 0:
            return j
    return None


def request_metrics(rec: dict, chat: bool = False) -> RequestMetrics:
    times = chunk_times(rec)
    start = rec["start_s"]
    toks = rec.get("chunk_tokens")
    first = first_token_index(toks)
    if first is None:  # usage counted tokens, yet no chunk brought text: time the first chunk
        first = 0
    ttft = times[first] - start
    last = rec.get("last_event_s", times[-1]) if chat else times[-1]
    e2el = max(last, times[-1]) - start
    out = rec["output_tokens"]
    tpot = (e2el - ttft) / (out - 1) if out and out > 1 else None
    gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
    if not toks:
        token_itls = list(gaps)
    else:
        token_itls = []
        prev = times[first]
        for t, k in zip(times[first + 1:], toks[first + 1:], strict=False):
            if k == 0:  # carries no token (an empty final chunk): no gap ends here
                continue
            k = 1 if k < 0 else k
            token_itls.extend([(t - prev) / k] * k)
            prev = t
    return RequestMetrics(ttft, e2el, tpot, gaps, token_itls)


def pct_label(p: float) -> str:
    return str(int(p)) if int(p) == p else str(p)


def describe(values, name: str, percentiles, out: dict) -> None:
    """Add mean/median/std/pXX of ``values`` (seconds) as InferenceX's ``*_ms`` keys."""
    if np is None:
        _describe_pure(values, name, percentiles, out)
        return
    arr = np.asarray(values, dtype=np.float64) * 1000.0
    if arr.size == 0:
        arr = np.zeros(1)  # InferenceX reports 0 for an empty metric
    out[f"mean_{name}_ms"] = float(np.mean(arr))
    out[f"median_{name}_ms"] = float(np.median(arr))
    out[f"std_{name}_ms"] = float(np.std(arr))
    for p in percentiles:
        out[f"p{pct_label(p)}_{name}_ms"] = float(np.percentile(arr, p))


def _describe_pure(values, name: str, percentiles, out: dict) -> None:
    ms = [float(v) * 1000.0 for v in values] or [0.0]
    s = sorted(ms)
    out[f"mean_{name}_ms"] = purestats.mean(ms)
    out[f"median_{name}_ms"] = purestats.median_sorted(s)
    out[f"std_{name}_ms"] = purestats.std(ms)
    for p in percentiles:
        out[f"p{pct_label(p)}_{name}_ms"] = purestats.percentile_sorted(s, p)


def summarize(records: list[dict], num_prompts: int, duration: float, *, chat: bool = False,
              selected=METRICS, percentiles=(90, 99, 99.9), goodput: dict | None = None) -> dict:
    """The InferenceX summary block plus extras (failed count, per-chunk gaps, errors)."""
    ok = [r for r in records if r.get("ok")]
    per = [request_metrics(r, chat) for r in ok]
    total_in = sum(int(r["prompt_len"]) for r in ok)
    total_out = sum(int(r["output_tokens"]) for r in ok)
    out: dict = {
        "duration": duration,
        "completed": len(ok),
        "failed": num_prompts - len(ok),
        "total_input_tokens": total_in,
        "total_output_tokens": total_out,
        "request_throughput": len(ok) / duration if duration > 0 else 0.0,
    }
    good = None
    if goodput:
        good = sum(1 for m in per if _is_good(m, goodput)) / duration if duration > 0 else 0.0
    out["request_goodput:"] = good  # sic: InferenceX's key carries the colon
    out["output_throughput"] = total_out / duration if duration > 0 else 0.0
    out["total_token_throughput"] = (total_in + total_out) / duration if duration > 0 else 0.0
    series = {
        "ttft": [m.ttft for m in per],
        "tpot": [m.tpot for m in per if m.tpot is not None],
        "itl": [g for m in per for g in m.token_itls],
        "e2el": [m.e2el for m in per],
    }
    for name in METRICS:
        if name in selected:
            describe(series[name], name, percentiles, out)
    # beyond InferenceX: the raw per-chunk gaps (its "ITL") next to the per-token ITL
    describe([g for m in per for g in m.chunk_gaps], "chunk_gap", percentiles, out)
    return out


def read_whole(records: list[dict], chat: bool = False) -> int:
    """How many successful requests of more than one output token came in one read: every
    token stamped with the first one's time, so their TPOT measures 0. A client that falls
    behind the server (a busy machine) reads them so; an engine never sends them so."""
    return sum(1 for r in records if r.get("ok") and request_metrics(r, chat).tpot == 0)


def _is_good(m: RequestMetrics, slo: dict) -> bool:
    vals = {"ttft": m.ttft, "tpot": m.tpot or 0.0, "e2el": m.e2el}
    return all(vals[k] * 1000.0 <= v for k, v in slo.items())


def error_counts(records: list[dict]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for r in records:
        if not r.get("ok"):
            cls = r.get("error_class") or "unknown"
            counts[cls] = counts.get(cls, 0) + 1
    return dict(sorted(counts.items()))
