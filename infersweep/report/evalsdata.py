"""The evals view's data: every staged run's eval rows, judged as the run pages judge them.

Each row carries both lm-eval filters' scores with a standard error, the threshold of its
model prefix from the eval thresholds file (the one ``eval check`` and the staging gate
use) and the verdict. The standard error is the one lm-eval recorded; an eval without one
gets the binomial standard error ``sqrt(p (1 - p) / n)`` of its score over its ``n``
questions, and the row says which. Like the explorer's data, the file is a script setting
one global (a page opened from ``file://`` may not fetch JSON).
"""

from __future__ import annotations

import math

from infersweep.report import datascript, pareto
from infersweep.report.explorerdata import seq_label
from infersweep.report.views import JudgedEval, SiteView

FILE = "evals-data.js"
GLOBAL = "INFERSWEEP_EVALS_DATA"
VERSION = 1
FILTERS = {"strict": "em-strict", "flexible": "em-flexible"}  # name -> the row's score field


def standard_error(score, recorded, n) -> tuple[float | None, str]:
    """(standard error, where it comes from): lm-eval's, else binomial over ``n``."""
    se = pareto.number(recorded)
    if se is not None:
        return se, "lm-eval"
    p, n = pareto.number(score), pareto.number(n)
    if p is None or n is None or n <= 0 or not 0 <= p <= 1:
        return None, ""
    return math.sqrt(p * (1 - p) / n), "binomial"


def _text(v) -> str:
    return "" if v is None else str(v)


def _row(e: JudgedEval) -> dict:
    r = e.row
    scores = {}
    for name, field in FILTERS.items():
        value = pareto.number(r.get(field))
        se, source = standard_error(value, r.get(f"{field}-stderr"), r.get("n-samples"))
        scores[name] = {"value": value, "se": se, "se_from": source}
    isl, osl, n = r.get("isl"), r.get("osl"), pareto.number(r.get("n-samples"))
    return {"run_id": str(e.run.run_id), "attempt": e.run.attempt,
            "config": _text(r.get("config-key")), "task": _text(r.get("task")),
            "model": _text(r.get("model")), "model_prefix": _text(r.get("model-prefix")),
            "seq": seq_label(isl, osl) if isl is not None and osl is not None else "",
            "n": int(n) if n is not None and n.is_integer() else n, **scores,
            "threshold": e.threshold, "threshold_source": e.threshold_source,
            "passed": e.passed, "fingerprint": _text(r.get("recipe-fingerprint")),
            "image": _text(r.get("image")), "job": _text(r.get("job-id")),
            "source": _text(r.get("source"))}


def arrange(site: SiteView, *, judged: bool) -> dict:
    """Every run's evals (oldest run first, each run's in the run page's order); ``judged``
    says whether a thresholds file was given (without one no eval has a verdict)."""
    rows = [_row(e) for i in range(len(site.runs)) for e in site.run_evals[i]]
    return {"version": VERSION, "judged": judged, "rows": rows,
            "tasks": sorted({r["task"] for r in rows})}


def script(data: dict) -> str:
    """``data`` as the script the page loads."""
    return datascript.script(GLOBAL, data, allow_nan=False)


def load_script(text: str) -> dict:
    """The data object back from :func:`script`'s text (for tests and tools)."""
    return datascript.load(GLOBAL, text, "an evals data file")
