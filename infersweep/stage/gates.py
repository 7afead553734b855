"""Whether a downloaded run may be staged: ``results check`` and ``eval check``, in-process.

The run's conclusion is not consulted. The results gate is
:func:`infersweep.results.check.check` on the run's aggregate (``aggregate/results.json``
of the ``results_bmk`` artifact), with the run's own matrix (the ``sweep-rows`` artifact)
as the authority on which points were asked for when it was downloaded. The eval gate is
:func:`infersweep.evals.check.check_folder` on every eval folder of the artifact (in the job
folders under ``results/``; runs of earlier versions kept them apart in ``evals/``), with the
thresholds of the checkout staging runs from; a matrix row marked ``run-eval`` without an
eval is a problem too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from infersweep.diagnostics import InputError
from infersweep.results import check as checking
from infersweep.results import collect as collecting

AGGREGATE = Path("aggregate", "results.json")
EVALS = "evals"
RESULTS = "results"
ROWS_FILE = "sweep-rows.json"


@dataclass
class GateResult:
    problems: list[str] = field(default_factory=list)   # one line each, for the reply
    counts: dict = field(default_factory=dict)
    evals_checked: int = 0

    @property
    def passed(self) -> bool:
        return not self.problems

    def line(self) -> str:
        c = self.counts
        head = f"{c.get('complete', 0)} of {c.get('expected', 0)} expected point(s) complete"
        evals = f", {self.evals_checked} eval(s) checked" if self.evals_checked else ""
        return head + evals


def matrix_rows(rows_dir: Path | None) -> list[dict] | None:
    if rows_dir is None:
        return None
    from infersweep.results.commands import _matrix_rows

    return _matrix_rows(Path(rows_dir) / ROWS_FILE)


def judge(bmk_dir: Path, rows: list[dict] | None, thresholds_file: Path,
          run_id: str | None = None) -> GateResult:
    """Both gates on an unpacked ``results_bmk``; with ``run_id``, every row must say it was
    measured by that run (an artifact holding another run's rows is not this run's)."""
    out = GateResult()
    agg_path = Path(bmk_dir) / AGGREGATE
    if not agg_path.is_file():
        out.problems.append(f"the results_bmk artifact has no {AGGREGATE.as_posix()} (the "
                            "collect job did not finish)")
        return out
    try:
        g = collecting.gather([str(agg_path)], allow_incomplete=True)
    except InputError as exc:
        out.problems += [d.message for d in exc.diagnostics]
        return out
    agg = collecting.aggregate(g)
    problems, counts = checking.check(agg, errors=g.errors, matrix_rows=rows)
    out.counts = counts
    out.problems += [f"results check: {p}" for p in problems]
    if run_id is not None:
        others = sorted({str(r.get("run_id")) for r in agg["rows"]} - {run_id})
        if others:
            out.problems.append(f"the aggregate holds rows of run {', '.join(others)[:200]}, "
                                f"not of run {run_id}")
    _evals(Path(bmk_dir), rows, thresholds_file, out)
    return out


def _evals(folder: Path, rows: list[dict] | None, thresholds_file: Path,
           out: GateResult) -> None:
    from infersweep.changelog.buckets import recipe_fingerprint
    from infersweep.evals import check as evalcheck
    from infersweep.evals import thresholds
    from infersweep.evals.collect import find

    # eval folders sit in their job folders (results/); older runs uploaded them apart (evals/)
    found = find([str(d) for d in (folder / RESULTS, folder / EVALS) if d.is_dir()])
    wanted = {recipe_fingerprint(r): r for r in rows or [] if r.get("run-eval")}
    if not found and not wanted:
        return
    try:
        limits = thresholds.load(str(thresholds_file))
    except InputError as exc:
        out.problems += [f"eval check: {d}" for d in exc.diagnostics]
        return
    have = set()
    for f in found:
        try:
            rep = evalcheck.check_folder(f, limits, None)
            data = evalcheck.load_eval(f)
        except InputError as exc:
            out.problems += [f"eval check: {d}" for d in exc.diagnostics]
            continue
        out.evals_checked += 1
        have.add((data.get("provenance") or {}).get("recipe-fingerprint"))
        rel = f.relative_to(folder).as_posix() if f.is_relative_to(folder) else f
        out.problems += [f"eval check: {rel}: {p.replace(str(f) + '/', '')}"
                         for p in rep.problems]
    for fp, row in sorted(wanted.items()):
        if fp not in have:
            out.problems.append(f"eval check: matrix row {row.get('model-prefix')} "
                                f"{row.get('runner')} {row.get('framework')} is marked run-eval "
                                "and has no eval")
