"""A staged run read straight from a run's files, without a results store.

``DIR`` may be a local `sweep run` output folder or a run's downloaded artifacts
(``aggregate/results.json``, ``aggregate/evals.json``, the changelog metadata), read by the
store's own reader (``infersweep.store.rundir``) so both see the same run, or an
aggregate file itself (with ``evals.json`` and the changelog metadata beside it).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import click

from infersweep.diagnostics import Diagnostic, InputError
from infersweep.results import agenticagg
from infersweep.results import collect as collecting
from infersweep.results.sources import load_json
from infersweep.rowjobs.manifest import now
from infersweep.store.model import StagedRun

AGGREGATE = Path("aggregate", "results.json")
EVALS = "evals.json"
CHANGELOG = "changelog_metadata.json"


def _error(path: Path, message: str, hint: str = "") -> InputError:
    return InputError(Diagnostic(str(path), 0, 0, message, hint or
                                 "give a `sweep run` output folder, a downloaded results "
                                 "artifact (aggregate/results.json) or an aggregate file",
                                 "report-input"))


def _rows_of(paths: list[str]) -> list[dict]:
    """Every row read (before the rerun rule, so rows of two runs are seen as such)."""
    g = collecting.gather(paths, allow_incomplete=True)
    collecting.raise_errors(g)
    return g.rows


def _evals_file(path: Path) -> list[dict]:
    data = load_json(path, "eval aggregate")
    rows = data.get("evals") if isinstance(data, dict) else None
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise _error(path, 'not an eval aggregate: expected {"evals": [...]}',
                     "give the file `infersweep eval collect` wrote")
    return rows


def _changelog(*candidates: Path) -> dict | None:
    for c in candidates:
        if c.is_file():
            data = load_json(c, "changelog metadata")
            if not isinstance(data, dict):
                raise _error(c, "changelog metadata is not a JSON object",
                             "give the file `changelog matrix --metadata-out` wrote")
            return data
    return None


def _identity(path: Path, rows: list[dict]) -> tuple[str, int]:
    ids = Counter(str(r["run_id"]) for r in rows)
    if len(ids) > 1:
        raise _error(path, f"rows of several runs ({', '.join(sorted(ids))})",
                     "give one run per --from-run")
    return next(iter(ids)), max(int(r["attempt"]) for r in rows)


def _from_aggregate_file(agg_file: Path) -> StagedRun:
    data = load_json(agg_file, "aggregate")
    if not (isinstance(data, dict) and "aggregate-version" in data):
        raise _error(agg_file, "not an aggregate (no aggregate-version)",
                     "give the file `infersweep results collect` wrote")
    rows = _rows_of([str(agg_file)])
    evals_path = agg_file.parent / EVALS
    evals = _evals_file(evals_path) if evals_path.is_file() else []
    base = agg_file.parent.parent
    changelog = _changelog(base / "results" / CHANGELOG, agg_file.parent / CHANGELOG,
                           base / CHANGELOG)
    if not rows:
        raise _error(agg_file, "the run has no result rows")
    run_id, attempt = _identity(agg_file, rows)
    staged = data.get("created") if isinstance(data.get("created"), str) else None
    g = collecting.gather([str(agg_file)], allow_incomplete=True)
    return StagedRun(run_id=run_id, attempt=attempt,
                     source="github" if run_id.isdigit() else "local",
                     staged_at=staged or now(), changelog=changelog,
                     points=collecting.deduplicate(rows), evals=evals,
                     agentic=_gated(agenticagg.entries(g.agentic)))


def _gated(entries: list[dict]) -> list[dict]:
    """The agentic results that pass their gates (as the store takes them); the others are
    named in a warning and left out of the report."""
    for e in entries:
        if e["problems"]:
            click.echo(f"warning: {e['result_file']}: left out of the report, it did not pass "
                       f"the agentic gates: {e['problems'][0]}", err=True)
    return [e for e in entries if not e["problems"]]


def _from_folder(folder: Path) -> StagedRun:
    """Read as ``store ingest`` reads it (the same layouts, the same checks)."""
    from infersweep.store.rundir import read_run_dir

    d = read_run_dir(folder)
    for w in d.warnings:
        click.echo(f"warning: {w}", err=True)
    ids = d.run_ids
    if not ids and d.agentic and not d.points and not d.evals:
        ids = [folder.name]  # agentic results name no run: the folder names it
    if len(ids) != 1:
        raise _error(folder, f"rows of several runs ({', '.join(ids)})" if ids else
                     "the rows name no run id", "give one run per --from-run")
    staged = d.started
    agg = folder / AGGREGATE
    if d.layout == "artifacts" and agg.is_file():
        created = load_json(agg, "aggregate").get("created")
        staged = created if isinstance(created, str) else staged
    run_id = ids[0]
    return StagedRun(run_id=run_id, attempt=d.attempt,
                     source="github" if d.layout == "artifacts" and run_id.isdigit()
                     else "local",
                     staged_at=staged or now(), created_at=d.started, changelog=d.changelog,
                     points=d.points, evals=d.evals, agentic=_gated(d.agentic),
                     recipes=d.recipes)


def load(raw: str | Path) -> StagedRun:
    """The staged run in ``raw`` (see the module docstring)."""
    path = Path(raw)
    if path.is_file():
        return _from_aggregate_file(path)
    if path.is_dir():
        return _from_folder(path)
    raise _error(path, "no such file or folder")
