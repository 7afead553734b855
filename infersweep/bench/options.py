"""Parsers for the bench options that are lists or structured strings. Each raises ValueError
with a message that says what was expected; ``commands`` turns it into a parse-time usage
error and ``runner.validate`` into an InputError (for callers of the Python API)."""

from __future__ import annotations

import math
from urllib.parse import urlsplit

from infersweep.diagnostics import did_you_mean

METRICS = ("ttft", "tpot", "itl", "e2el")
GOODPUT_KEYS = ("ttft", "tpot", "e2el")
SCHEMES = ("http", "https")
DEFAULT_PORTS = {"http": 80, "https": 443}
ENDPOINTS = ("/v1/completions", "/v1/chat/completions")


def _items(text: str) -> list[str]:
    return [x.strip() for x in text.split(",") if x.strip()]


def percentile_metrics(text: str) -> list[str]:
    out = _items(text)
    for m in out:
        if m not in METRICS:
            hint = did_you_mean(m, METRICS)
            raise ValueError(f"unknown metric {m!r}: expected a comma-separated list of "
                             f"{', '.join(METRICS)}" + (f" ({hint})" if hint else ""))
    return out


def metric_percentiles(text: str) -> list[float]:
    out = []
    for x in _items(text):
        try:
            p = float(x)
        except ValueError:
            raise ValueError(f"{x!r} is not a number: expected comma-separated percentiles "
                             "such as 90,99,99.9") from None
        if not (math.isfinite(p) and 0 <= p <= 100):
            raise ValueError(f"percentile {x} is not in [0, 100]")
        out.append(p)
    if not out:
        raise ValueError("no percentiles given: expected e.g. 90,99,99.9")
    return out


def goodput(items) -> dict[str, float]:
    out: dict[str, float] = {}
    for g in items:
        k, sep, v = g.partition(":")
        k = k.strip()
        if not sep or k not in GOODPUT_KEYS:
            raise ValueError(f"{g!r}: expected KEY:MS with KEY one of {', '.join(GOODPUT_KEYS)} "
                             "(e.g. ttft:500)")
        try:
            ms = float(v)
        except ValueError:
            raise ValueError(f"{g!r}: {v!r} is not a number of milliseconds") from None
        if not (math.isfinite(ms) and ms > 0):
            raise ValueError(f"{g!r}: the SLO must be a positive, finite number of milliseconds")
        if k in out:
            raise ValueError(f"{g!r}: {k} is given twice")
        out[k] = ms
    return out


def metadata(items) -> list[str]:
    for item in items:
        k, sep, _ = item.partition("=")
        if not sep or not k.strip():
            raise ValueError(f"{item!r}: expected KEY=VALUE")
    return list(items)


def base_url(url: str) -> tuple[str, str, int]:
    """(scheme, host, port) of a server URL."""
    u = urlsplit(url)
    if u.scheme not in SCHEMES or not u.hostname:
        raise ValueError(f"{url!r}: expected {' or '.join(s + '://' for s in SCHEMES)}host:port")
    try:
        port = u.port
    except ValueError:
        raise ValueError(f"{url!r}: the port must be a number in 1..65535") from None
    if port == 0:
        raise ValueError(f"{url!r}: the port must be a number in 1..65535")
    if u.query or u.fragment:
        raise ValueError(f"{url!r}: a base URL takes no query or fragment")
    return u.scheme, u.hostname, port or DEFAULT_PORTS[u.scheme]


def endpoint(path: str) -> str:
    if not path.startswith("/") or not path.rstrip("/").endswith("completions"):
        raise ValueError(f"{path!r}: expected a path such as {' or '.join(ENDPOINTS)}")
    return path


# request fields the client sets itself, per request: --extra-body may not replace them
OWNED_FIELDS = {
    "model": "--model / --served-model-name",
    "prompt": "the workload (--random-input-len)",
    "messages": "the workload (--random-input-len)",
    "stream": "the client (it measures a stream)",
    "max_tokens": "--random-output-len (per request)",
    "max_completion_tokens": "--random-output-len (per request)",
}


def extra_body(text: str) -> dict:
    """``--extra-body``: a JSON object merged into every request body (engine-specific
    fields such as ``{"ignore_eos": true}`` or a ``chat_template_kwargs``)."""
    import json

    try:
        obj = json.loads(text)
    except ValueError as exc:
        raise ValueError(f"not valid JSON ({exc}): expected an object such as "
                         "'{\"top_k\": 1}'") from None
    if not isinstance(obj, dict):
        raise ValueError(f"expected a JSON object such as '{{\"top_k\": 1}}', got "
                         f"{type(obj).__name__} {text.strip()[:60]}")
    owned = [k for k in obj if k in OWNED_FIELDS]
    if owned:
        raise ValueError("; ".join(f"{k!r} is set by {OWNED_FIELDS[k]}, not by --extra-body"
                                   for k in owned))
    return obj
