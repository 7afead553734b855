"""What the store accepts before it writes anything: results rows that pass their schema,
eval rows shaped as ``eval collect`` writes them, finite numbers, and a sane run identity.

Every problem is collected (not just the first) and located: a point by the result file it
came from, an eval by its folder.
"""

from __future__ import annotations

import datetime as _dt
import math
import re

from infersweep.config.schema import validate_data
from infersweep.diagnostics import Diagnostic, InputError
from infersweep.results import fastschema, runids

ROW_SCHEMA = "results-row"
MAX_PROBLEMS = 20
_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,99}$")
# eval collect's fields the store indexes, with the types they may hold
EVAL_FIELDS = {"task": (str,), "em-strict": (int, float), "em-flexible": (int, float),
               "config-key": (str, type(None)), "recipe-fingerprint": (str, type(None)),
               "run-id": (str, type(None)), "attempt": (int, type(None)),
               "n-samples": (int,), "conc": (int, type(None)), "model": (str, type(None)),
               "source": (str,)}


def _non_finite(value, where: str = "") -> str | None:
    """The path of the first NaN or infinity in ``value``, or None."""
    if isinstance(value, float):
        return None if math.isfinite(value) else (where or "the value")
    if isinstance(value, dict):
        for k, v in value.items():
            found = _non_finite(v, f"{where}.{k}" if where else str(k))
            if found:
                return found
    elif isinstance(value, list):
        for i, v in enumerate(value):
            found = _non_finite(v, f"{where}[{i}]")
            if found:
                return found
    return None


non_finite = _non_finite  # for the agentic checks (:mod:`infersweep.store.agentic`)


def _point_label(i: int, row) -> tuple[str, str]:
    if not isinstance(row, dict):
        return f"point {i + 1}", f"point {i + 1}"
    where = row.get("result_file") if isinstance(row.get("result_file"), str) else None
    label = (f"point {i + 1} ({row.get('config_key')} {row.get('recipe_name')} "
             f"c={row.get('conc')})")
    return where or f"point {i + 1}", label


def check_points(points: list[dict]) -> list[Diagnostic]:
    out = []
    for i, row in enumerate(points):
        where, label = _point_label(i, row)
        if not isinstance(row, dict):
            out.append(Diagnostic(where, 0, 0, f"{label} is not a JSON object",
                                  "pass rows `results collect` wrote", "store-row"))
        elif not fastschema.valid(row, ROW_SCHEMA):
            found = validate_data(row, ROW_SCHEMA)
            if found:
                out.append(Diagnostic(where, 0, 0, f"{label} is not a results row: "
                                      + "; ".join(found[:3]),
                                      "pass rows `results process` or `results collect` "
                                      "wrote", "store-row"))
        if isinstance(row, dict) and (bad := _non_finite(row)):
            out.append(Diagnostic(where, 0, 0, f"{label}: {bad} is not a finite number",
                                  rule="store-row"))
        if len(out) >= MAX_PROBLEMS:
            break
    return out


def run_ids(points, evals=()) -> list[str]:
    """Every run id the rows (and the rows they replaced) and the evals name, sorted: the
    rule ``results check`` applies (:mod:`infersweep.results.runids`)."""
    return list(runids.run_ids(points, evals))


def check_one_run(points, evals=(), where: str = "run") -> list[Diagnostic]:
    """A folder whose rows and evals belong to more than one run (``results-run-id``), as
    ``results check`` refuses it; ``store ingest --run-id`` stages such rows as one run."""
    found = runids.mixed_runs(points, evals, where=where,
                              hint=runids.ONE_RUN_HINT + ", or --run-id to stage them as one "
                                                         "run")
    return [found] if found is not None else []


def check_evals(evals: list[dict]) -> list[Diagnostic]:
    out = []
    for i, row in enumerate(evals):
        if not isinstance(row, dict):
            out.append(Diagnostic(f"eval {i + 1}", 0, 0, f"eval {i + 1} is not a JSON object",
                                  "pass rows `eval collect` wrote", "store-eval"))
            continue
        where = row.get("source") if isinstance(row.get("source"), str) else f"eval {i + 1}"
        for key, types in EVAL_FIELDS.items():
            v = row.get(key)
            if key not in row or isinstance(v, bool) or not isinstance(v, types):
                names = " or ".join("null" if t is type(None) else t.__name__ for t in types)
                out.append(Diagnostic(where, 0, 0, f"eval {i + 1}: {key} is "
                                      f"{'missing' if key not in row else repr(v)}, expected "
                                      f"{names}", "pass rows `eval collect` wrote",
                                      "store-eval"))
        if bad := _non_finite(row):
            out.append(Diagnostic(where, 0, 0, f"eval {i + 1}: {bad} is not a finite number",
                                  rule="store-eval"))
        if len(out) >= MAX_PROBLEMS:
            break
    return out


def utc_text(value: str | None, what: str) -> str | None:
    """An ISO 8601 time as ``YYYY-MM-DDTHH:MM:SSZ`` in UTC (naive times are taken as UTC)."""
    if value is None:
        return None
    try:
        t = _dt.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        raise InputError(Diagnostic(what, 0, 0, f"{value!r} is not an ISO 8601 time",
                                    "e.g. 2026-12-01T10:00:00Z", "store-run")) from None
    if t.tzinfo is None:
        t = t.replace(tzinfo=_dt.UTC)
    return t.astimezone(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def check_run_id(run_id, attempt) -> list[Diagnostic]:
    out = []
    if not isinstance(run_id, str) or not _RUN_ID.match(run_id):
        out.append(Diagnostic("run", 0, 0, f"run id {run_id!r} is not 1-100 letters, digits "
                              "or ._:- starting with a letter or digit",
                              "pass GitHub's run id or a local run's id", "store-run"))
    if isinstance(attempt, bool) or not isinstance(attempt, int) or attempt < 1:
        out.append(Diagnostic("run", 0, 0, f"attempt {attempt!r} is not an integer >= 1",
                              rule="store-run"))
    return out
