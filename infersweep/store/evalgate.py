"""The eval gate every way into the store applies: ``/stage-results``, ``sweep run --stage``
and ``store ingest`` store an eval only from a folder that passes ``eval check``.

What an eval is judged against never comes from the eval: its row (and so its model prefix
and threshold) is the row of the job it ran in, found by the recipe fingerprint its
provenance records among the rows the caller trusts (the run's matrix when staging, the job
folders' ``row.json`` otherwise). An eval whose fingerprint names no such row, or whose
recorded model prefix is not its row's, is refused: relabelling an eval cannot pick a lower
threshold.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from infersweep.diagnostics import InputError
from infersweep.evals.scope import Scope, of_scale_down

MANIFEST = "manifest.json"
ROW_FILE = "row.json"


@dataclass
class EvalVerdict:
    passed: list[Path] = field(default_factory=list)   # folders whose evals may be stored
    problems: list[str] = field(default_factory=list)  # one line each, located
    reports: list = field(default_factory=list)        # EvalReport of every folder judged
    fingerprints: set = field(default_factory=set)     # recipe fingerprints the evals name


def rows_by_fingerprint(rows) -> dict[str, dict]:
    from infersweep.changelog.buckets import recipe_fingerprint

    return {recipe_fingerprint(r): r for r in rows if isinstance(r, dict)}


def job_rows(root: Path) -> list[dict]:
    """Every job's ``row.json`` below ``root`` (a folder's own rows, when there is no matrix)."""
    rows = []
    for p in sorted(Path(root).rglob(ROW_FILE)):
        if (p.parent / MANIFEST).is_file():
            try:
                data = json.loads(p.read_text())
            except (OSError, ValueError):
                continue  # the results gate names a job folder it cannot read
            if isinstance(data, dict):
                rows.append(data)
    return rows


def job_scope(folder: Path, root: Path) -> Scope:
    """The scope the eval's own job ran it at: LOCAL when the nearest job manifest above it
    (within ``root``) says the job was scaled down, else FULL."""
    root = Path(root).resolve()
    for parent in Path(folder).resolve().parents:
        if not parent.is_relative_to(root):
            break
        if (parent / MANIFEST).is_file():
            try:
                return of_scale_down(json.loads((parent / MANIFEST).read_text())
                                     .get("scale-down"))
            except (OSError, ValueError, AttributeError):
                return Scope.FULL
    return Scope.FULL


def judge(folders: list[Path], rows: dict[str, dict], limits: dict, *, root: Path,
          dataset: str | os.PathLike | None = None, run_id: str | None = None,
          scope=None) -> EvalVerdict:
    """Judge each eval folder against its job's row in ``rows`` (by recipe fingerprint).
    ``scope``: a Scope for all, or None for each eval's own job's (:func:`job_scope`).
    Problems name the folder relative to ``root``."""
    from infersweep.evals import check as evalcheck

    out = EvalVerdict()
    root = Path(root)
    for f in folders:
        rel = _relative(str(f), root)
        try:
            data = evalcheck.load_eval(f)
        except InputError as exc:
            out.problems += [_relative(str(d), root) for d in exc.diagnostics]
            continue
        prov = data.get("provenance") if isinstance(data.get("provenance"), dict) else {}
        fp = prov.get("recipe-fingerprint")
        out.fingerprints.add(fp)
        row = rows.get(fp) if isinstance(fp, str) else None
        if row is None:
            out.problems.append(f"{rel}/eval.json: [eval-provenance] its recipe fingerprint "
                                f"{str(fp)[:16]!r} is no row of the run's jobs, so nothing "
                                "says which model (and threshold) it is judged for")
            continue
        if prov.get("model-prefix") != row.get("model-prefix"):
            out.problems.append(f"{rel}/eval.json: [eval-provenance] its provenance says "
                                f"model-prefix {prov.get('model-prefix')!r}; the row of its "
                                f"job says {row.get('model-prefix')!r}")
            continue
        try:
            rep = evalcheck.check_folder(
                f, limits, row.get("model-prefix"), dataset=dataset,
                scope=job_scope(f, root) if scope is None else scope)
        except InputError as exc:
            out.problems += [_relative(str(d), root) for d in exc.diagnostics]
            continue
        out.reports.append(rep)
        out.problems += [_relative(p, root) for p in rep.problems]
        if run_id is not None and str(prov.get("run-id")) != run_id:
            out.problems.append(f"{rel}: measured by run {prov.get('run-id')}, not by run "
                                f"{run_id}")
            continue
        if rep.passed:
            out.passed.append(Path(f))
    return out


def _relative(text: str, folder: Path) -> str:
    return text.replace(str(folder) + os.sep, "")
