"""A staged run read straight from a run's files, without a results store.

``DIR`` may be a downloaded ``results_bmk`` artifact (``aggregate/results.json`` and, when
the run had evals, ``aggregate/evals.json``; the changelog metadata in ``results/``), an
aggregate file itself, or a local `sweep run` output folder (processed here the way
``results collect`` and ``eval collect`` do).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from infersweep.diagnostics import Diagnostic, InputError
from infersweep.launch.manifest import FILENAME as MANIFEST
from infersweep.launch.manifest import now
from infersweep.results import collect as collecting
from infersweep.results.sources import load_json
from infersweep.stage.model import StagedRun

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


def _newest_collected(folder: Path) -> str | None:
    stamps = []
    for m in sorted(folder.rglob(MANIFEST)):
        try:
            stamps.append(load_json(m, "manifest")["provenance"]["collected"])
        except (InputError, KeyError, TypeError):
            continue
    return max((s for s in stamps if isinstance(s, str)), default=None)


def _identity(path: Path, rows: list[dict]) -> tuple[str, int]:
    ids = Counter(str(r["run_id"]) for r in rows)
    if len(ids) > 1:
        raise _error(path, f"rows of several runs ({', '.join(sorted(ids))})",
                     "give one run per --from-run")
    return next(iter(ids)), max(int(r["attempt"]) for r in rows)


def load(raw: str | Path) -> StagedRun:
    """The staged run in ``raw`` (see the module docstring)."""
    path = Path(raw)
    if path.is_file() or (path / AGGREGATE).is_file():
        agg_file = path if path.is_file() else path / AGGREGATE
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
        staged = data.get("created") if isinstance(data.get("created"), str) else None
    elif path.is_dir():
        rows = _rows_of([str(path)])
        from infersweep.evals import collect as evalcollect

        evals = evalcollect.collect([str(path)])["evals"]
        changelog = _changelog(path / CHANGELOG)
        staged = _newest_collected(path)
    else:
        raise _error(path, "no such file or folder")
    if not rows:
        raise _error(path, "the run has no result rows")
    run_id, attempt = _identity(path, rows)
    rows = collecting.deduplicate(rows)
    return StagedRun(run_id=run_id, attempt=attempt,
                     source="github" if run_id.isdigit() else "local",
                     staged_at=staged or now(), changelog=changelog, points=rows, evals=evals)
