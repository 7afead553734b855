"""Whether a downloaded run may be staged, and exactly what is stored if it may.

The rule: **what is stored is what was gated**. Nothing is taken from a file the run wrote
about itself. The points are rebuilt here from the job folders (``results/`` of the
``results_bmk`` artifact: each job's manifest, row and point files) through ``results
collect``'s own code and judged by :func:`infersweep.results.check.check`, with the run's
matrix (the ``sweep-rows`` artifact, required) as the only authority on which points were
asked for. The evals are the eval folders inside those job folders (runs of earlier versions
kept them apart in ``evals/``), each judged by :func:`infersweep.evals.check.check_folder`
against the test split and the thresholds of the checkout staging runs from, for the model
prefix of the matrix row its provenance names (an eval whose provenance disagrees with the
matrix is refused: :mod:`infersweep.store.evalgate`); the eval rows
stored are built from the folders that passed. The collect job's aggregates
(``aggregate/results.json`` and ``evals.json``) are compared with that evidence: an aggregate
that says something else (a forged score, a point removed) refuses the run.

The run's conclusion is not consulted.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path

from infersweep.agentic import gatepoints
from infersweep.diagnostics import InputError
from infersweep.results import agenticagg, runids
from infersweep.results import check as checking
from infersweep.results import collect as collecting
from infersweep.results.sources import load_json
from infersweep.store import recipes

AGGREGATE = Path("aggregate", "results.json")
EVAL_AGGREGATE = Path("aggregate", "evals.json")
EVALS = "evals"
RESULTS = "results"
ROWS_FILE = "sweep-rows.json"
SHOWN = 5  # disagreements named per aggregate
EVAL_SCORES = ("n-samples", "em-strict", "em-flexible", "requests-failed")
WHERE = ("result_file", "source", "replaced")  # where a machine kept a file, not a measurement


@dataclass
class GateResult:
    problems: list[str] = field(default_factory=list)   # one line each, for the reply
    counts: dict = field(default_factory=dict)
    evals_checked: int = 0
    points: list[dict] = field(default_factory=list)    # what the store gets: the checked
    evals: list[dict] = field(default_factory=list)     # evidence, nothing else
    agentic: list[dict] = field(default_factory=list)   # `results collect`'s agentic entries
    recipes: list[dict] = field(default_factory=list)   # the job folders' recipe.yaml

    @property
    def passed(self) -> bool:
        return not self.problems

    def line(self) -> str:
        c = self.counts
        head = f"{c.get('complete', 0)} of {c.get('expected', 0)} expected point(s) complete"
        evals = f", {self.evals_checked} eval(s) checked" if self.evals_checked else ""
        local = c.get("local") or 0
        local = f", {local} of them local agentic runs (not publishable)" if local else ""
        return head + local + evals


def matrix_rows(rows_dir: Path) -> list[dict]:
    """The run's matrix: the rows file of the ``sweep-rows`` artifact."""
    from infersweep.results.commands import _matrix_rows

    return _matrix_rows(Path(rows_dir) / ROWS_FILE)


def judge(bmk_dir: Path, rows: list[dict], thresholds_file: Path, run_id: str | None = None,
          *, eval_dataset: str | os.PathLike | None = None,
          agentic_dirs: list[Path] = ()) -> GateResult:
    """Both gates on an unpacked ``results_bmk`` against the run's matrix ``rows``; with
    ``run_id``, every row and eval must say it was measured by that run. ``agentic_dirs``:
    the agentic job folders rebuilt from their own artifacts
    (:mod:`infersweep.stage.agenticarts`), the only agentic evidence; agentic results inside
    ``results_bmk`` are not read. On a pass, ``points``, ``evals`` and ``agentic`` are what
    the store may take."""
    out = GateResult()
    bmk_dir = Path(bmk_dir)
    jobs = bmk_dir / RESULTS
    if not jobs.is_dir():
        out.problems.append(f"the results_bmk artifact has no {RESULTS}/ job folders (the "
                            "collect job did not finish)")
        return out
    try:
        g = collecting.gather([str(jobs)], allow_incomplete=True, allow_empty=True,
                              agentic_results=False)
        g.agentic = gatepoints.examine([str(d) for d in agentic_dirs])
    except InputError as exc:
        out.problems += [str(d) for d in exc.diagnostics]
        return out
    agg = collecting.aggregate(g)
    agentic = agenticagg.entries(g.agentic)
    problems, counts = checking.check(agg, errors=g.errors, matrix_rows=rows)
    out.counts = counts
    out.problems += [f"results check: {p}" for p in problems]
    if run_id is not None:
        # every row read and every row it replaced, as the one-run rule counts them
        others = sorted(set(runids.run_ids(g.rows)) - {run_id})
        if others:
            out.problems.append(f"the job folders hold rows of run {', '.join(others)[:200]}, "
                                f"not of run {run_id}")
    out.problems += _disagreements(bmk_dir / AGGREGATE, agg["rows"], "rows",
                                   collecting.point_key, _point_label)
    if _claims(bmk_dir / AGGREGATE, "agentic"):  # an aggregate silent on agentic claims none
        out.problems += _disagreements(bmk_dir / AGGREGATE, agentic, "agentic", _agentic_key,
                                       _agentic_label, fields=("result",))
    evals = _evals(bmk_dir, rows, thresholds_file, run_id, eval_dataset, out)
    out.problems += _disagreements(bmk_dir / EVAL_AGGREGATE, evals, "evals", _eval_key,
                                   _eval_label, fields=EVAL_SCORES)
    if out.passed:
        for r in agg["rows"]:  # where in the artifact, not where this machine unpacked it
            r["result_file"] = _relative(str(r["result_file"]), bmk_dir)
        for e in agentic:
            e["result_file"] = _relative(e["result_file"], bmk_dir.parent)
        out.points, out.evals, out.agentic = agg["rows"], evals, agentic
        out.recipes = recipes.of_jobs(g)
    return out


def _claims(path: Path, key: str) -> bool:
    try:
        data = load_json(path, path.name)
    except InputError:
        return True  # unreadable: the comparison says so
    return not isinstance(data, dict) or key in data


def _agentic_key(e: dict) -> tuple:
    r = e.get("result") if isinstance(e.get("result"), dict) else {}
    return (e.get("config_key"), r.get("recipe_fingerprint"), agenticagg.offload_mode(r),
            r.get("conc"))


def _agentic_label(e: dict) -> str:
    r = e.get("result") if isinstance(e.get("result"), dict) else {}
    return (f"agentic {e.get('config_key')} {agenticagg.offload_mode(r)} "
            f"c={r.get('conc')}")


def _point_label(r: dict) -> str:
    return f"{r.get('config_key')} {r.get('recipe_name')} c={r.get('conc')}"


def _eval_key(r: dict) -> tuple:
    return (r.get("config-key"), r.get("recipe-fingerprint"), r.get("run-id"), r.get("task"))


def _eval_label(r: dict) -> str:
    return f"{r.get('config-key')} {r.get('task')} (recipe {str(r.get('recipe-fingerprint'))[:12]})"


def _same(a, b) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        try:
            return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-12)
        except (TypeError, ValueError):
            return False
    return a == b


def _disagreements(path: Path, evidence: list[dict], list_key: str, key, label,
                   fields: tuple[str, ...] | None = None) -> list[str]:
    """Where the collect job's aggregate at ``path`` says other than the evidence: a row it
    lacks or adds, or a value (of ``fields``, else every field both have) it changes."""
    if not path.is_file():
        return []
    name = f"{path.parent.name}/{path.name}"
    tail = (f"{name} is not what the job folders hold: the aggregate was edited or written by "
            "another run; re-run the sweep")
    try:
        data = load_json(path, name)
        claimed = data.get(list_key) if isinstance(data, dict) else None
        if not isinstance(claimed, list) or not all(isinstance(r, dict) for r in claimed):
            raise ValueError(f"no '{list_key}' list of objects")
        claimed_by = {key(r): r for r in claimed}
    except (InputError, ValueError, TypeError) as exc:
        return [f"{name}: cannot be compared with the job folders ({exc})", tail]
    mine = {key(r): r for r in evidence}
    found = []
    for k in sorted(set(mine) - set(claimed_by), key=str):
        found.append(f"{name} lacks {label(mine[k])}, which the job folders hold")
    for k in sorted(set(claimed_by) - set(mine), key=str):
        found.append(f"{name} has {label(claimed_by[k])}, which no checked job folder holds")
    for k in sorted(set(mine) & set(claimed_by), key=str):
        a, b = mine[k], claimed_by[k]
        names = fields or sorted(set(a) & set(b) - set(WHERE))
        changed = [f for f in names if not _same(a.get(f), b.get(f))]
        if changed:
            f = changed[0]
            found.append(f"{name} says {f} = {b.get(f)!r} for {label(a)}; the job folders "
                         f"give {a.get(f)!r}")
    if len(found) > SHOWN:
        found = found[:SHOWN] + [f"{name}: {len(found) - SHOWN} more disagreement(s)"]
    return found + [tail] if found else []


def _evals(folder: Path, rows: list[dict], thresholds_file: Path, run_id: str | None,
           dataset, out: GateResult) -> list[dict]:
    """The eval rows built from the eval folders that pass ``eval check``, each judged for
    the matrix row of its job (:mod:`infersweep.store.evalgate`): the model prefix, and so
    the threshold, is the matrix row's, never the eval's."""
    from infersweep.evals import collect as evalcollect
    from infersweep.evals import thresholds
    from infersweep.evals.scope import Scope
    from infersweep.store import evalgate

    # eval folders sit in their job folders (results/); older runs uploaded them apart (evals/)
    found = evalcollect.find([str(d) for d in (folder / RESULTS, folder / EVALS) if d.is_dir()])
    matrix = evalgate.rows_by_fingerprint(rows)
    wanted = {fp: r for fp, r in matrix.items() if r.get("run-eval")}
    if not found and not wanted:
        return []
    try:
        limits = thresholds.load(str(thresholds_file))
    except InputError as exc:
        out.problems += [f"eval check: {d}" for d in exc.diagnostics]
        return []
    verdict = evalgate.judge(found, matrix, limits, root=folder, dataset=dataset,
                             run_id=run_id, scope=Scope.FULL)
    out.evals_checked += len(verdict.reports)
    out.problems += [f"eval check: {p}" for p in verdict.problems]
    for fp, row in sorted(wanted.items()):
        if fp not in verdict.fingerprints:
            out.problems.append(f"eval check: matrix row {row.get('model-prefix')} "
                                f"{row.get('runner')} {row.get('framework')} is marked run-eval "
                                "and has no eval")
    passed = verdict.passed
    evals = evalcollect.collect([str(f) for f in passed])["evals"] if passed else []
    for e in evals:  # where in the artifact, not where this machine unpacked it
        e["source"] = _relative(e["source"], folder)
        e["replaced"] = [_relative(s, folder) for s in e["replaced"]]
    return evals


def _relative(text: str, folder: Path) -> str:
    return text.replace(str(folder) + os.sep, "")
