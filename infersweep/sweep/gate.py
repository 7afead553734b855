"""The end of `sweep run`: `results check` and `eval check` on what the sweep wrote, in one line.

Both checks run in-process with the same code as their commands, so the sweep's verdict is
the one the staging gate would give for the same folder.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from infersweep.diagnostics import InputError
from infersweep.evals.thresholds import DEFAULT_PATH
from infersweep.results import check as checking
from infersweep.results import collect as collecting

EVAL_DIR = "eval"  # beside the point results, in the manifest's result-dir
THRESHOLDS = Path(DEFAULT_PATH)
NO_EVAL = "the row is marked run-eval and has no eval"


@dataclass
class Verdict:
    problems: list[checking.Problem]
    counts: dict
    evals: list = field(default_factory=list)  # EvalReport per eval folder checked
    eval_problems: list[str] = field(default_factory=list)

    @property
    def stageable(self) -> bool:
        return not self.problems and not self.eval_problems

    def line(self) -> str:
        points = f"{self.counts['complete']}/{self.counts['expected']} points"
        parts = []
        by_kind: dict[str, list[str]] = {}
        for p in self.problems:
            conc = p.point.rsplit(" c=", 1)[1] if " c=" in p.point else None
            by_kind.setdefault(p.kind, []).append(f"c={conc}" if conc else p.point)
        for kind, where in by_kind.items():
            n = len(where)
            noun = "point" if kind in (checking.MISSING, checking.SHORT, checking.FAILED,
                                       checking.UNUSABLE) else "problem"
            label = {"job": "job not completed"}.get(kind, kind)
            parts.append(f"{n} {noun}{'s' if n > 1 else ''} {label} ({', '.join(where)})")
        if not self.evals and not self.eval_problems:
            evals = "no evals asked for"
        elif self.eval_problems:
            below = sum(1 for p in self.eval_problems if "below the threshold" in p)
            absent = sum(1 for p in self.eval_problems if p.endswith(NO_EVAL))
            other = len(self.eval_problems) - below - absent
            bits = []
            if absent:
                bits.append(f"{absent} eval{'s' if absent > 1 else ''} missing")
            if below:
                bits.append("eval below threshold")
            if other:
                bits.append(f"{other} eval problem{'s' if other > 1 else ''}")
            evals = ", ".join(bits)
        else:
            evals = f"evals pass ({len(self.evals)})"
        if self.stageable:
            return f"stageable: yes — {points}, {evals}"
        return "stageable: no — " + ", ".join(parts + ([] if self.problems else [points])
                                               + ([evals] if self.eval_problems else []))


def eval_folder(workdir: Path, manifest: dict) -> Path:
    return Path(workdir) / manifest["result-dir"] / EVAL_DIR


def judge(out_dir: Path, rows: list[tuple[Path, dict, dict]], *, repo: Path,
          srt_slurm_commit: str | None) -> Verdict:
    """``rows``: (job folder, matrix row, manifest) of every row the sweep ran."""
    g = collecting.gather([str(out_dir)], allow_incomplete=True)
    agg = collecting.aggregate(g)
    problems, counts = checking.check(agg, srt_slurm_commit=srt_slurm_commit, errors=g.errors)
    verdict = Verdict(problems, counts)
    wanted = [(w, row, m) for w, row, m in rows if row.get("run-eval")]
    if not wanted:
        return verdict
    from infersweep.evals import check as evalcheck
    from infersweep.evals import thresholds
    from infersweep.evals.scope import of_scale_down

    try:
        limits = thresholds.load(str(Path(repo) / THRESHOLDS))
    except InputError as exc:
        verdict.eval_problems.append(str(exc))
        return verdict
    for workdir, row, m in wanted:
        folder = eval_folder(workdir, m)
        if not folder.is_dir():
            verdict.eval_problems.append(f"{folder}: {NO_EVAL}")
            continue
        # a scaled-down sweep runs scaled-down evals (--limit): judged as such, never as staged
        scope = of_scale_down(m.get("scale-down"))
        try:
            # the row's model prefix picks the threshold (a cluster eval has no --row)
            rep = evalcheck.check_folder(folder, limits, row.get("model-prefix"), scope=scope)
        except InputError as exc:
            verdict.eval_problems.append(str(exc))
            continue
        verdict.evals.append(rep)
        verdict.eval_problems += rep.problems
    return verdict
