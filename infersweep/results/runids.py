"""One run per folder: the rule ``results check`` and the results store share.

The run ids are those of every row read: each row's own, and those of the rows it replaced
under the rerun rule (an aggregate keeps them in ``replaced``), and those the evals name. Two
or more is a folder mixing runs: the gate would call a mix of measurements one run, and the
store would stage them under one id.
"""

from __future__ import annotations

from infersweep.diagnostics import Diagnostic

ONE_RUN_HINT = ("pass the folder of one run (one `sweep run` output folder, or one run's "
                "artifacts)")


def run_ids(rows, evals=()) -> dict[str, str | None]:
    """Run id -> the first result file (or eval source) that names it, sorted by id."""
    found: dict[str, str | None] = {}

    def add(run_id, where) -> None:
        if isinstance(run_id, str) and run_id:
            found.setdefault(run_id, where if isinstance(where, str) else None)

    for r in rows:
        if not isinstance(r, dict):
            continue
        add(r.get("run_id"), r.get("result_file"))
        for old in r.get("replaced") or []:
            if isinstance(old, dict):
                add(old.get("run_id"), old.get("result_file"))
    for e in evals:
        if isinstance(e, dict):
            add(e.get("run-id"), e.get("source"))
    return dict(sorted(found.items()))


def mixed_runs(rows, evals=(), *, where: str = "run",
               hint: str = ONE_RUN_HINT) -> Diagnostic | None:
    """The problem of rows (and evals) that belong to more than one run, or None."""
    ids = run_ids(rows, evals)
    if len(ids) < 2:
        return None
    shown = list(ids)[:5]
    files = "; ".join(f"{i}: {ids[i]}" for i in shown if ids[i])
    return Diagnostic(str(where), 0, 0, f"the rows belong to {len(ids)} runs: "
                      f"{', '.join(shown)}" + (f" (first files: {files})" if files else ""),
                      hint, "results-run-id")
