"""``eval collect``: a run's evals as rows that join to its benchmark rows.

Each row carries the provenance the benchmark rows carry (config key, recipe fingerprint,
image, parallelism, run id, attempt) next to both filters' scores. Rows are in a stable
order (config key, recipe fingerprint, run id, attempt, folder), not filesystem order; of
several attempts of one eval (same config key, recipe fingerprint and run id) the newest
attempt wins and the row names the folders it replaced.
"""

from __future__ import annotations

from pathlib import Path

from infersweep.diagnostics import InputError
from infersweep.evals.run import EVAL_FILE
from infersweep.evals.summary import load_eval

COLLECT_VERSION = 1


def find(folders: list[str]) -> list[Path]:
    found: set[Path] = set()
    for f in folders:
        p = Path(f)
        if (p / EVAL_FILE).is_file():
            found.add(p)
        elif p.is_dir():
            found.update(e.parent for e in p.rglob(EVAL_FILE))
        else:
            raise InputError(f"{f}: not a folder")
    return sorted(found)


def row(folder: Path, data: dict) -> dict:
    p = data.get("provenance") or {}
    s = data["scores"]
    q = data["requests"]
    return {
        "config-key": p.get("config-key"), "recipe-fingerprint": p.get("recipe-fingerprint"),
        "image": p.get("image"), "parallelism": p.get("parallelism"),
        "model-prefix": p.get("model-prefix"), "run-id": p.get("run-id"),
        "attempt": p.get("attempt"), "job-id": p.get("job-id"), "isl": p.get("isl"),
        "osl": p.get("osl"), "conc": data.get("concurrency"),
        "task": data["task"], "model": data["model"], "api": data.get("api"),
        "n-samples": data["n-samples"],
        "em-strict": s["strict-match"]["exact_match"],
        "em-strict-stderr": s["strict-match"].get("stderr"),
        "em-flexible": s["flexible-extract"]["exact_match"],
        "em-flexible-stderr": s["flexible-extract"].get("stderr"),
        "requests-failed": q.get("failed"), "retries": q.get("retries"),
        "retry-time-s": q.get("retry-time-s"), "source": str(folder), "replaced": [],
    }


def _order(r: dict) -> tuple:
    return (str(r["config-key"] or ""), str(r["recipe-fingerprint"] or ""),
            str(r["run-id"] or ""), r["attempt"] or 0, r["source"])


def collect(folders: list[str]) -> dict:
    rows = [row(f, load_eval(f)) for f in find(folders)]
    rows.sort(key=_order)
    kept: dict[tuple, dict] = {}
    for r in rows:  # ascending attempt: a later one replaces an earlier one
        key = (r["config-key"], r["recipe-fingerprint"], r["run-id"], r["task"])
        if r["config-key"] is None:
            key = key + (r["source"],)  # no provenance: nothing to de-duplicate on
        old = kept.get(key)
        if old is not None:
            r["replaced"] = old["replaced"] + [old["source"]]
        kept[key] = r
    out = sorted(kept.values(), key=_order)
    return {"collect-version": COLLECT_VERSION, "evals": out}
