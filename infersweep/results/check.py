"""The staging gate: a run holds exactly the points its matrix rows asked for, each complete.

Every problem names its point (config key, recipe, concurrency) and, where there is one, the
file: a missing point, a short one (completed < requested), one with failed requests, one
whose image / srt-slurm commit / engine revision is not the expected one, a point or file
nobody asked for, a job that did not complete, rows of more than one run, two job folders
with different rows for one point, run and attempt (both named). A point whose
file is unusable (gone, not a result, outside its job folder, or numbers no engine can
produce: :mod:`infersweep.results.plausible`) is named with the rule it broke.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from infersweep import output
from infersweep.diagnostics import Diagnostic
from infersweep.matrix.rows import concs as row_concs
from infersweep.results import runids
from infersweep.results.collect import CLASH_RULE, point_key, reason

MISSING, SHORT, FAILED, UNEXPECTED, IDENTITY, UNUSABLE, JOB, CLASH = (
    "missing", "short", "failed", "unexpected", "identity", "unusable", "job", "clash")


@dataclass(frozen=True)
class Problem:
    kind: str
    point: str  # "config-key recipe c=N", or the recipe for a job-level problem
    message: str
    file: str | None = None

    def __str__(self) -> str:
        return f"{self.point}: {self.kind}: {self.message}"


def _label(p: dict) -> str:
    return f"{p['config_key']} {p['recipe_name']} c={p['conc']}"


def _describe_row(row: dict) -> str:
    from infersweep.results.process import topology

    lengths = ("agentic-coding" if row.get("scenario-type") == "agentic-coding"
               else f"{row.get('isl')}/{row.get('osl')}")
    return (f"matrix row {row.get('model-prefix')} {row.get('runner')} {row.get('framework')} "
            f"{topology(row, {})} {lengths}")


def against_matrix(agg: dict, matrix_rows: list[dict]) -> tuple[list[Problem], int]:
    """Points of the matrix no job ran, and points jobs ran that the matrix lacks (rows are
    matched by recipe fingerprint, which leaves out the concurrency list). An eval-only row
    asks for no point but for its eval: a job of its recipe whose eval folder holds one
    (``eval check`` judges it)."""
    from infersweep.changelog.buckets import recipe_fingerprint

    want: dict[tuple, dict] = {}
    evals = {j.get("recipe_fingerprint") for j in agg["jobs"] if j.get("eval_only")
             and j.get("eval")}
    problems = []
    for row in matrix_rows:
        if row.get("eval-only"):
            if recipe_fingerprint(row) not in evals:
                problems.append(Problem(MISSING, f"{_describe_row(row)} eval",
                                        "the matrix asks for this eval-only row's eval; no "
                                        "job of the run has its eval folder"))
            continue
        if not row.get("conc"):
            continue
        fp = recipe_fingerprint(row)
        # a single-node row's conc is one int, a multi-node row's a list
        for c in row_concs(row):
            want[(fp, c)] = row
    have = {(e.get("recipe_fingerprint"), e["conc"]): e for e in agg["expected"]}
    problems += [Problem(MISSING, f"{_describe_row(row)} c={key[1]}",
                        "the matrix asks for this point; no job of the run has it")
                for key, row in want.items() if key not in have]
    problems += [Problem(UNEXPECTED, _label(e), "the run has this point; the matrix does not "
                         "ask for it") for key, e in have.items() if key not in want]
    return problems, len(want)


def check(agg: dict, *, srt_slurm_commit: str | None = None,
          errors: list[tuple[str, object]] = (),
          matrix_rows: list[dict] | None = None) -> tuple[list[Problem], dict]:
    """Problems of an aggregate (empty: stageable) and counts for the report."""
    from infersweep.agentic import gatepoints

    problems: list[Problem] = []
    asked = None
    agentic_rows = None
    if matrix_rows is not None:
        agentic_rows = [r for r in matrix_rows if gatepoints.is_agentic_row(r)]
        found, asked = against_matrix(agg, [r for r in matrix_rows
                                            if not gatepoints.is_agentic_row(r)])
        problems += found
    agentic = agg.get("agentic") or []
    problems += [Problem(*p) for p in gatepoints.point_problems(agentic, agentic_rows)]
    agentic_asked, agentic_good = gatepoints.counts(agentic, agentic_rows)
    rows = {point_key(r): r for r in agg["rows"]}
    expected = {point_key(e): e for e in agg["expected"]}
    missing = {point_key(m): m for m in agg["missing"]}
    points = {_label(e) for e in expected.values()}
    for lbl, diag in errors:  # an expected point's problem is named with the point below
        if getattr(diag, "rule", None) == CLASH_RULE:  # two folders, one point: both named
            problems.append(Problem(CLASH, str(lbl), diag.message.split(": ", 1)[-1],
                                    diag.path))
        elif str(lbl) not in points:
            problems.append(Problem(UNUSABLE, str(lbl), reason(diag, str(lbl)), diag.path))
    for key, e in expected.items():
        r = rows.get(key)
        if r is None:
            m = missing.get(key, {})
            kind = UNUSABLE if m.get("status") == "unusable" else MISSING
            problems.append(Problem(kind, _label(e), m.get("reason") or "no row for this point",
                                    m.get("file") or m.get("manifest")))
            continue
        where = r["result_file"]
        if r["completed"] < r["requested"] or r["num_prompts"] != r["requested"]:
            problems.append(Problem(SHORT, _label(e), f"completed {r['completed']} of "
                                    f"{r['requested']} requested (the client was asked for "
                                    f"{r['num_prompts']})", where))
        if r["failed"]:
            problems.append(Problem(FAILED, _label(e), f"{r['failed']} request(s) failed",
                                    where))
        checks = [("image", e.get("image"), r.get("image")),
                  ("engine revision", e.get("engine_revision"), r.get("engine_revision"))]
        if srt_slurm_commit:
            checks.append(("srt-slurm commit", srt_slurm_commit, r.get("srt_slurm_commit")))
        for what, want, got in checks:
            if want is not None and got != want:
                problems.append(Problem(IDENTITY, _label(e),
                                        f"{what} is {got!r}, expected {want!r}", where))
    mixed = runids.mixed_runs(agg["rows"], hint="check one run at a time: its `sweep run` "
                              "output folder, or its CI artifacts")
    if mixed is not None:
        problems.append(Problem(IDENTITY, "run", reason(mixed, "")))
    commits = sorted({str(r.get("srt_slurm_commit")) for r in agg["rows"]})
    if not srt_slurm_commit and len(commits) > 1:
        problems.append(Problem(IDENTITY, "run", "rows come from different srt-slurm "
                                f"commits: {', '.join(commits)}"))
    if rows and not expected:
        problems.append(Problem(MISSING, "run", "nothing says which points were expected (pass "
                               "the run folders, whose manifests have their row.json, or an "
                               "aggregate collected from them)"))
    for key, r in rows.items():
        if expected and key not in expected:
            problems.append(Problem(UNEXPECTED, _label(r), "a row for a point no matrix row "
                                    "asked for", r["result_file"]))
    for u in agg["unexpected"]:
        problems.append(Problem(UNEXPECTED, f"{u['config_key']} {u['recipe_name']}",
                                f"result file {u['file']}: {u['reason']}", u["manifest"]))
    for j in agg["jobs"]:
        if j["job_state"] != "COMPLETED":
            why = f" ({j['job_reason']})" if j.get("job_reason") else ""
            problems.append(Problem(JOB, f"{j['config_key']} {j['recipe_name']}",
                                    f"job {j['job_id']} ended {j['job_state']}{why}",
                                    j["manifest"]))
    good = sum(1 for k, r in rows.items() if k in expected and r["successful"])
    counts = {"expected": (len(expected) if asked is None else asked) + agentic_asked,
              "complete": good + agentic_good, "rows": len(rows), "problems": len(problems),
              "local": sum(1 for e in agentic if not e["problems"] and not e["publishable"])}
    return problems, counts


def text_report(problems: list[Problem], counts: dict) -> str:
    lines = [f"error: {p}" + (f" [{p.file}]" if p.file else "") for p in problems]
    lines.append(verdict(problems, counts))
    return "\n".join(lines)


def verdict(problems: list[Problem], counts: dict) -> str:
    head = f"{counts['complete']} of {counts['expected']} expected point(s) complete"
    if problems:
        return f"results check: FAILED, {head}, {len(problems)} problem(s)"
    if counts.get("local"):
        head += f", {counts['local']} of them local agentic runs (scaled down, not publishable)"
    return f"results check: passed, {head}; the run is stageable"


def as_diagnostic(p: Problem) -> Diagnostic:
    return Diagnostic(p.file or "", 0, 0, f"{p.point}: {p.message}")


def github_annotations(problems: list[Problem]) -> str:
    """``::error file=…,title=…::message`` workflow commands, one per problem (the renderer
    every command's ``--output-format github`` shares)."""
    return "\n".join(output.annotation(as_diagnostic(p), title=f"results check: {p.kind}")
                     for p in problems)


def markdown_summary(problems: list[Problem], counts: dict) -> str:
    lines = ["## Results check", "", verdict(problems, counts), ""]
    if problems:
        lines += ["| point | problem | detail |", "|---|---|---|"]
        for p in problems:
            lines.append(f"| {p.point} | {p.kind} | {p.message.replace('|', '/')} |")
    return "\n".join(lines) + "\n"


def as_json(problems: list[Problem], counts: dict) -> dict:
    return {"ok": not problems, **{k: v for k, v in counts.items() if k != "problems"},
            "problems": [asdict(p) for p in problems]}
