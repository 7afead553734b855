"""The replay client's exports, read: per-request records, the aggregate, the server scrape.

aiperf (``agentx-harness``) writes into its ``--output-artifact-dir``:

- ``profile_export.jsonl``: one JSON object per request, ``metadata.benchmark_phase``
  (``warmup`` or ``profiling``), ``metadata.request_start_ns``/``request_end_ns``, ``metrics``
  as ``{name: {"value", "unit"}}``, and ``error`` (``code``, ``type``, ``message``) for a
  failed request;
- ``profile_export_aiperf.json``: aggregates of the profiling phase (``request_count``,
  ``error_request_count`` only when there were errors, ``theoretical_prefix_cache_hit`` as
  hit blocks ``sum`` over blocks ``count``), ``input_config`` (the run's settings) and
  ``metadata.submission_valid``;
- ``server_metrics_export.json``: each Prometheus family scraped during ``metrics_phase``,
  counters as the delta over that window (``stats.total``), gauges as ``avg``/``max``.

Warm-up records are never measurements: they are counted and dropped here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from infersweep.diagnostics import Diagnostic, InputError

RECORDS = "profile_export.jsonl"
AGGREGATE = "profile_export_aiperf.json"
SERVER_METRICS = "server_metrics_export.json"
PROFILING = "profiling"
RULE = "agentic-export"
HINT = "pass the --output-artifact-dir of one finished replay (aiperf writes these files)"


@dataclass
class Exports:
    folder: Path
    aggregate: dict
    records: list[dict]        # profiling records that succeeded
    errors: list[dict]         # profiling records that failed
    accounting: dict           # what was read and what was dropped, and why
    server: dict | None = None  # the server scrape, None when aiperf wrote none
    warnings: list[str] = field(default_factory=list)


def _bad(path: Path, message: str, line: int = 0, col: int = 0, hint: str = HINT) -> InputError:
    return InputError(Diagnostic(str(path), line, col, message, hint, RULE))


def load_json_object(path: Path, what: str) -> dict:
    """A JSON object from ``path``; anything else is located bad input."""
    if not path.is_file():
        raise _bad(path, f"no {what} here")
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise _bad(path, f"cannot read the {what}: {exc.strerror or exc}") from None
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError:
        try:
            data = json.loads(raw.decode("utf-8", "replace"))
        except json.JSONDecodeError as exc:
            raise _bad(path, f"the {what} is not valid JSON: {exc.msg}", exc.lineno,
                       exc.colno) from None
    if not isinstance(data, dict):
        raise _bad(path, f"the {what} is not a JSON object")
    return data


def error_category(error) -> str:
    """A short name for a failed request's error: its type, else its code, else the first
    words of its message."""
    if isinstance(error, dict):
        for key in ("type", "code"):
            if error.get(key) not in (None, ""):
                return str(error[key])[:120]
        error = error.get("message")
    text = str(error or "").strip().splitlines()
    return (text[0].split(":", 1)[0] if text else "unknown")[:120] or "unknown"


def read_records(path: Path) -> tuple[list[dict], list[dict], dict]:
    """(profiling successes, profiling errors, accounting) of ``profile_export.jsonl``."""
    if not path.is_file():
        raise _bad(path, "no per-request export here (aiperf writes profile_export.jsonl)")
    ok, failed = [], []
    acc = {"records_total": 0, "records_profiled": 0, "records_dropped_total": 0,
           "records_warmup_dropped": 0, "records_error_dropped": 0, "error_categories": {}}
    with path.open("rb") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                rec = orjson.loads(line)
            except orjson.JSONDecodeError as exc:
                col = getattr(exc, "colno", 1) or 1
                raise _bad(path, f"line {n} is not a JSON record: {exc}", n, col) from None
            meta = rec.get("metadata") if isinstance(rec, dict) else None
            if not isinstance(meta, dict) or not isinstance(rec.get("metrics", {}), dict):
                raise _bad(path, "a record without a metadata object", n, 1)
            acc["records_total"] += 1
            phase = meta.get("benchmark_phase")
            if phase is not None and phase != PROFILING:
                acc["records_warmup_dropped"] += 1
                continue
            if rec.get("error"):
                cats = acc["error_categories"]
                cat = error_category(rec["error"])
                cats[cat] = cats.get(cat, 0) + 1
                acc["records_error_dropped"] += 1
                failed.append(rec)
                continue
            for key in ("request_start_ns", "request_end_ns"):
                v = meta.get(key)
                if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
                    raise _bad(path, f"a profiling record's metadata.{key} is {v!r}, expected "
                               "a timestamp in ns", n, 1)
            ok.append(rec)
    acc["records_profiled"] = len(ok)
    acc["records_dropped_total"] = acc["records_total"] - len(ok)
    acc["error_categories"] = dict(sorted(acc["error_categories"].items()))
    return ok, failed, acc


def read(folder: Path) -> Exports:
    """The exports of one replay. The per-request file and the aggregate must be there; a
    missing server scrape is no error here (the gate decides whether it was required)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise _bad(folder, "no such folder")
    records, errors, acc = read_records(folder / RECORDS)
    aggregate = load_json_object(folder / AGGREGATE, "aggregate export")
    server_path = folder / SERVER_METRICS
    server = load_json_object(server_path, "server metrics export") if server_path.is_file() \
        else None
    out = Exports(folder, aggregate, records, errors, acc, server)
    if server is None:
        out.warnings.append(f"{server_path}: no server metrics export (aiperf scraped no "
                            "/metrics)")
    return out


def metric_value(record: dict, name: str):
    """A per-request metric's value (``{"value": v, "unit": u}`` or a bare number)."""
    m = record.get("metrics", {}).get(name)
    return m.get("value") if isinstance(m, dict) else m


def aggregate_number(aggregate: dict, name: str, stat: str = "avg"):
    """``aggregate[name][stat]`` when it is a number, else None."""
    m = aggregate.get(name)
    v = m.get(stat) if isinstance(m, dict) else None
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def profiling_phase(aggregate: dict) -> dict:
    """The profiling phase's settings from ``input_config`` (duration, concurrency, ...)."""
    phases = (aggregate.get("input_config") or {}).get("phases") or []
    for p in phases:
        if isinstance(p, dict) and p.get("kind", p.get("name")) == PROFILING:
            return p
    return {}
