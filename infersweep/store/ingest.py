"""Ingesting a run folder without GitHub: `store ingest`, and `sweep run --stage`.

The folder is read as ``store ingest`` documents (a `sweep run` output folder or a run's
downloaded artifacts); the run's id and attempt come from its rows unless given. Its evals
pass the eval gate ``/stage-results`` applies, or nothing is stored.
"""

from __future__ import annotations

from dataclasses import dataclass

from infersweep.diagnostics import Diagnostic, InputError
from infersweep.evals.thresholds import DEFAULT_PATH as THRESHOLDS
from infersweep.store import agentic, checks


@dataclass
class Staged:
    summary: object   # IngestSummary
    source: str       # "github" or "local"
    layout: str       # "artifacts" or "sweep"
    store: str        # the store as shown to people (no password)
    created: str | None = None  # the revision of a schema this call created


def ingest_folder(store, folder, *, run_id: str | None = None, attempt: int | None = None,
                 thresholds_file=THRESHOLDS, dataset=None, echo=lambda line: None) -> Staged:
    """Ingest the run in ``folder`` into ``store`` (an open Store) in one transaction,
    creating the store's schema first when the store is new. Every eval is judged by
    ``eval check`` first, against ``thresholds_file`` for its job's row
    (:func:`gate_evals`); one that fails refuses the ingest."""
    from infersweep.store import RunInfo, read_run_dir

    d = read_run_dir(folder)
    for w in d.warnings:
        echo(f"warning: {w}")
    gate_evals(d, thresholds_file, dataset)
    run_id = run_id or d.run_id
    if not run_id:  # the rule `results check` applies too
        raise InputError(checks.check_one_run(d.points, d.evals, str(folder))
                         or [Diagnostic(str(folder), 0, 0, "the rows name no run id (agentic "
                                        "results name none)" if d.agentic and not d.points
                                        else "the rows name no run id", "pass --run-id",
                                        "store-input")])
    attempt = attempt or d.attempt
    source = "github" if d.layout == "artifacts" and run_id.isdigit() else "local"
    local = sum(1 for e in d.agentic if not agentic.is_publishable(e["result"]))
    shown = (f", {len(d.agentic)} agentic result(s) ({local} local, not publishable)"
             if d.agentic else "")
    echo(f"{len(d.points)} point(s){shown}, {len(d.evals)} eval(s) of run {run_id} attempt "
         f"{attempt} ({d.layout} folder)")
    info = RunInfo(run_id=run_id, attempt=attempt, source=source, created_at=d.started,
                   changelog=d.changelog)
    store.check(info, d.points, d.evals, d.agentic, d.recipes)  # before a new file is made
    created = store.migrate() if store.revision is None else None
    summary = store.ingest(info, d.points, d.evals, d.agentic, d.recipes)
    return Staged(summary, source, d.layout, store.target.shown, created)


def gate_evals(d, thresholds_file, dataset=None) -> None:
    """Every eval folder of the run judged as ``/stage-results`` judges it, for the row of
    its job (the job folders' ``row.json``) and at its job's scope (scaled-down jobs run
    scaled-down evals); an InputError naming each problem when any fails."""
    if not d.eval_folders:
        return
    from infersweep.evals import thresholds
    from infersweep.store import evalgate

    limits = thresholds.load(str(thresholds_file))
    verdict = evalgate.judge(d.eval_folders, evalgate.rows_by_fingerprint(
        evalgate.job_rows(d.root)), limits, root=d.root, dataset=dataset)
    if verdict.problems:
        raise InputError([Diagnostic(str(d.root), 0, 0, f"eval check: {p}",
                                     "an eval is stored only when `eval check` passes it; fix "
                                     "or re-run the eval", "store-eval-gate")
                          for p in verdict.problems])
