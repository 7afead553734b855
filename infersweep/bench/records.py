"""The per-request records file (``<result>.records.jsonl``): a meta line, then one JSON object
per request. Written atomically; read back with every problem located at its line."""

from __future__ import annotations

import math

from infersweep.atomic import atomic_writer
from infersweep.bench import metrics, runtime
from infersweep.diagnostics import Diagnostic, InputError

TIMES_NOTE = "seconds from benchmark start; chunk_gaps_us from start_s"

# the fields the summary is computed from, and the JSON types each may have
_NUM = (int, float)
_FIELDS = {
    "id": (int,), "ok": (bool,), "start_s": _NUM, "end_s": _NUM, "prompt_len": (int,),
    "output_tokens": (int,), "chunk_gaps_us": (list, type(None)),
    "chunk_tokens": (list, type(None)), "last_event_s": _NUM + (type(None),),
}


def meta_line(*, num_prompts: int, duration: float, chat: bool, selected, percentiles,
              **extra) -> dict:
    return {"meta": {"num_prompts": num_prompts, "duration": duration, "chat": chat,
                     "percentile_metrics": list(selected),
                     "metric_percentiles": list(percentiles), "times": TIMES_NOTE, **extra}}


def write(path, meta: dict, lines: list[bytes]) -> None:
    """``lines`` are records already serialised by the workers (no second JSON pass)."""
    with atomic_writer(path) as f:
        f.write(runtime.dumps(meta) + b"\n")
        for line in lines:
            f.write(line + b"\n")


def read(path: str) -> tuple[dict, list[dict]]:
    """The meta block and the records; an InputError at ``path:line:col`` for anything that
    is not a well-formed records file (truncated line, wrong type, missing field)."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    meta = None
    records: list[dict] = []
    for lineno, line in enumerate(raw.split(b"\n"), start=1):
        if not line.strip():
            continue
        try:
            obj = runtime.loads(line)
        except runtime.JSONDecodeError as exc:
            truncated = lineno == raw.rstrip(b"\n").count(b"\n") + 1 and not raw.endswith(b"\n")
            hint = ("the file ends mid-line: it was cut short (a full disk or an interrupted "
                    "copy?)" if truncated else "each line must be one JSON object")
            raise InputError(Diagnostic(path, lineno, exc.colno if exc.lineno == 1 else 1,
                                        f"not valid JSON: {exc.msg}", hint)) from exc
        if meta is None:
            meta = _meta(path, lineno, obj)
            continue
        records.append(_record(path, lineno, obj))
    if meta is None:
        raise InputError(Diagnostic(path, 0, 0, "not an infersweep records file (no meta line)",
                                    "bench serve --save-result writes <result>.records.jsonl"))
    return meta, records


def _fail(path, lineno, message, hint="") -> InputError:
    return InputError(Diagnostic(path, lineno, 1, message, hint))


def _meta(path, lineno, obj) -> dict:
    if not isinstance(obj, dict) or not isinstance(obj.get("meta"), dict):
        raise _fail(path, lineno, "not an infersweep records file (the first line is not "
                    "a {\"meta\": {...}} object)",
                    "bench serve --save-result writes <result>.records.jsonl")
    meta = obj["meta"]
    n, d = meta.get("num_prompts"), meta.get("duration")
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise _fail(path, lineno, f"meta.num_prompts must be a positive integer (got {n!r})")
    if not isinstance(d, _NUM) or isinstance(d, bool) or not math.isfinite(d) or d <= 0:
        raise _fail(path, lineno, f"meta.duration must be a positive number (got {d!r})")
    if not isinstance(meta.get("chat"), bool):
        raise _fail(path, lineno, f"meta.chat must be true or false (got {meta.get('chat')!r})")
    sel = meta.get("percentile_metrics")
    if not isinstance(sel, list) or any(m not in metrics.METRICS for m in sel):
        raise _fail(path, lineno, f"meta.percentile_metrics must list names from "
                    f"{', '.join(metrics.METRICS)} (got {sel!r})")
    pcts = meta.get("metric_percentiles")
    if not isinstance(pcts, list) or not all(
            isinstance(p, _NUM) and not isinstance(p, bool) and 0 <= p <= 100 for p in pcts):
        raise _fail(path, lineno, f"meta.metric_percentiles must list numbers in [0, 100] "
                    f"(got {pcts!r})")
    return meta


def _record(path, lineno, obj) -> dict:
    if not isinstance(obj, dict):
        raise _fail(path, lineno, f"a record must be a JSON object (got {type(obj).__name__})")
    for key, types in _FIELDS.items():
        if key == "last_event_s" and key not in obj:
            continue
        val = obj.get(key, KeyError)
        if val is KeyError:
            raise _fail(path, lineno, f"record lacks the field {key!r}")
        if not isinstance(val, types) or (isinstance(val, bool) and bool not in types):
            raise _fail(path, lineno, f"record field {key!r} has the wrong type "
                        f"({type(val).__name__})")
    gaps = obj["chunk_gaps_us"] or []
    if not all(isinstance(g, int) and not isinstance(g, bool) for g in gaps):
        raise _fail(path, lineno, "record field 'chunk_gaps_us' must list integers")
    if obj["ok"] and not gaps:
        raise _fail(path, lineno, "a successful record has no token chunks (chunk_gaps_us)")
    toks = obj["chunk_tokens"] or []
    if not all(isinstance(k, int) and not isinstance(k, bool) for k in toks):
        raise _fail(path, lineno, "record field 'chunk_tokens' must list integers")
    return obj
