"""The gates InferenceX applies to an agentic result, judged on the evidence, not the claims.

Each result is read with the exports it names (``artifacts``, inside its own folder) and the
numbers a forger would have to keep consistent are recomputed from ``profile_export.jsonl``:

- ``agentic-schema``: the result matches ``agentic-result.schema.json``;
- ``agentic-consistency``: successful and failed request counts equal the profiling records,
  throughput (and per GPU) recomputed from the records within 1 %, the concurrency, duration
  and ``submission_valid`` are the exports' own;
- ``agentic-error-rate``: failed / (successful + failed) at most 10 % (InferenceX's
  ``validate_agentic_result``), counted from the records;
- ``agentic-server-metrics``: the engine family the row's framework exposes (``vllm:``,
  ``sglang:``, ``atom:``) is in the server scrape;
- ``agentic-submission``: aiperf's ``submission_valid`` is true, unless the result says it was
  scaled down locally (then it passes as a local run, never publishable); a run shorter than
  its row asks for must say so.
"""

from __future__ import annotations

from pathlib import Path

from infersweep.agentic import resultexports, resultrequests, servermetrics
from infersweep.agentic.result import SCHEMA, row_gpus
from infersweep.config.schema import validate_data
from infersweep.diagnostics import Diagnostic, InputError
from infersweep.results import jobpaths
from infersweep.results.process import key_position

MAX_ERROR_RATE = 0.10
TOLERANCE = 0.01
RULE_SCHEMA = "agentic-schema"
RULE_CONSISTENCY = "agentic-consistency"
RULE_ERROR_RATE = "agentic-error-rate"
RULE_SERVER = "agentic-server-metrics"
RULE_SUBMISSION = "agentic-submission"
EDITED = ("the exports say otherwise: the result was edited or written from other exports; "
          "run `infersweep agentic process` again on the job's exports")
HINTS = {
    RULE_ERROR_RATE: "InferenceX refuses a replay with more than 10 % failed requests: look at "
                     "the error categories and the engine's log, then rerun the point",
    RULE_SERVER: "the engine needs `--enable-metrics` (SGLang) or its /metrics endpoint "
                 "reachable, or the router must expose /metrics; pass it to the replay with "
                 "--server-metrics",
    RULE_SUBMISSION: "a publishable replay runs the pinned scenario unmodified; a local run "
                     "scaled down says so (`agentic process --scaled-down-json`)",
}


def _diag(path: Path, key: str, message: str, rule: str, hint: str = "") -> Diagnostic:
    line, col = key_position(path, key) if key else (0, 0)
    return Diagnostic(str(path), line, col, message, hint or HINTS.get(rule, EDITED), rule)


def _apart(got, want) -> bool:
    if got is None or want is None:
        return got is not want
    return abs(got - want) > TOLERANCE * max(abs(got), abs(want)) + 1e-9


def evidence(result: dict, path: Path) -> resultexports.Exports:
    """The exports a result names, which must lie inside its folder."""
    raw = result.get("artifacts")
    folder = jobpaths.inside(path, raw if isinstance(raw, str) else "", "/artifacts")
    return resultexports.read(folder)


def _consistency(r: dict, ex: resultexports.Exports, path: Path, row: dict | None) -> list:
    out = []
    n_ok, n_err = len(ex.records), len(ex.errors)
    acc = r["request_accounting"]
    counts = [("num_requests_successful", r["num_requests_successful"], n_ok),
              ("num_requests_total", r["num_requests_total"], ex.accounting["records_total"]),
              ("error_request_count", acc["error_request_count"], n_err),
              ("records_warmup_dropped", acc["records_warmup_dropped"],
               ex.accounting["records_warmup_dropped"])]
    agg_ok = resultexports.aggregate_number(ex.aggregate, "request_count")
    agg_err = resultexports.aggregate_number(ex.aggregate, "error_request_count") or 0
    counts += [("request_count (aggregate export)", agg_ok, n_ok) if agg_ok is not None else
               None, ("error_request_count (aggregate export)", agg_err, n_err)]
    for item in filter(None, counts):
        key, got, want = item
        if got != want:
            out.append(_diag(path, key.split(" ")[0], f"{key} is {got!r}, but "
                             f"{resultexports.RECORDS} holds {want} such profiling record(s)",
                             RULE_CONSISTENCY))
    gpus = r["num_gpus"]
    if row is not None and row_gpus(row) and gpus != row_gpus(row):
        out.append(_diag(path, "num_gpus", f"num_gpus is {gpus}, the matrix row's parallelism "
                         f"gives {row_gpus(row)}", RULE_CONSISTENCY))
    tp = resultrequests.throughput(ex.records, gpus)
    got = r["request_metrics"]["throughput"]
    for side in ("input", "output", "total"):
        claim, real = got[side]["tokens_per_second"], tp[side]["tokens_per_second"]
        if _apart(claim, real):
            out.append(_diag(path, "throughput", f"{side} throughput is {claim!r} tok/s, the "
                             f"profiling records give {real!r} (1 % allowed)", RULE_CONSISTENCY))
    for key, real in tp["per_gpu"].items():
        claim = got["per_gpu"].get(key)
        if _apart(claim, real):
            out.append(_diag(path, key, f"per_gpu.{key} is {claim!r}, the profiling records "
                             f"over {gpus} GPU(s) give {real!r} (1 % allowed)",
                             RULE_CONSISTENCY))
    phase = resultexports.profiling_phase(ex.aggregate)
    meta = ex.aggregate.get("metadata") if isinstance(ex.aggregate.get("metadata"), dict) else {}
    same = [("conc", r["conc"], phase.get("concurrency")),
            ("submission_valid", r["submission_valid"], meta.get("submission_valid")),
            ("duration", r["duration"]["run"], phase.get("duration"))]
    scaled_run = ((r.get("scaled") or {}).get("duration") or {}).get("run")
    if scaled_run is not None:
        same.append(("scaled", scaled_run, phase.get("duration")))
    for key, claim, real in same:
        if claim != real:
            out.append(_diag(path, key, f"{key} says {claim!r}, the aggregate export "
                             f"says {real!r}", RULE_CONSISTENCY))
    return out


def _server(r: dict, ex: resultexports.Exports, path: Path) -> list:
    want = servermetrics.required_prefix(r["framework"])
    metrics = (ex.server or {}).get("metrics") or {}
    if ex.server is None or not metrics:
        return [_diag(path, "server_metrics", f"no server metrics were scraped ("
                      f"{resultexports.SERVER_METRICS} is missing or empty)", RULE_SERVER)]
    if want and not any(str(n).startswith(want) for n in metrics):
        seen = sorted({str(n).split(":")[0] + ":" for n in metrics if ":" in str(n)})
        return [_diag(path, "server_metrics", f"framework {r['framework']!r} exposes "
                      f"{want}* metrics; the scrape has none (families: "
                      f"{', '.join(seen) or 'none with a prefix'})", RULE_SERVER)]
    return []


def _submission(r: dict, path: Path, row: dict | None) -> list:
    if r.get("scaled"):
        return []
    out = []
    if r["submission_valid"] is not True:
        out.append(_diag(path, "submission_valid", f"submission_valid is "
                         f"{r['submission_valid']!r} and the result does not say it was scaled "
                         "down locally", RULE_SUBMISSION))
    want = row.get("duration") if row else r["duration"]["row"]
    ran = r["duration"]["run"]
    if isinstance(want, (int, float)) and isinstance(ran, (int, float)) and ran < want:
        out.append(_diag(path, "duration", f"the replay ran {ran:g} s, its row asks for "
                         f"{want:g} s, and the result does not say it was scaled down",
                         RULE_SUBMISSION))
    if r["publishable"] and out:
        out.append(_diag(path, "publishable", "publishable is true for a result that is not",
                         RULE_SUBMISSION))
    return out


def judge(result, path: Path, row: dict | None = None) -> list[Diagnostic]:
    """Every finding on one result (empty: it passes). ``row``: its matrix row, when known."""
    path = Path(path)
    found = validate_data(result, SCHEMA)
    if found:
        return [Diagnostic(str(path), 0, 0, f"not an agentic result: {m}",
                           "pass files written by `infersweep agentic process`", RULE_SCHEMA)
                for m in found[:5]]
    try:
        ex = evidence(result, path)
    except InputError as exc:
        return exc.diagnostics
    out = _consistency(result, ex, path, row)
    n_ok, n_err = len(ex.records), len(ex.errors)
    rate = n_err / (n_ok + n_err) if n_ok + n_err else 1.0
    if rate > MAX_ERROR_RATE:
        out.append(_diag(path, "request_accounting", f"{n_err} of {n_ok + n_err} profiling "
                         f"requests failed ({rate:.1%}), above InferenceX's "
                         f"{MAX_ERROR_RATE:.0%} limit", RULE_ERROR_RATE))
    out += _server(result, ex, path)
    out += _submission(result, path, row)
    return out
