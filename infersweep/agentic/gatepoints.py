"""A run's agentic results against what was asked: exactly one per (row, concurrency).

A job folder holds its matrix row (``row.json``), the replay's exports and one
``*.agentic.json`` result per concurrency. The points asked for are the agentic rows of the
matrix (``results check --matrix``), else the ``row.json`` beside each result; rows are told
apart by recipe fingerprint, which leaves out the concurrency. A point with no result is
missing, a point with two is refused naming both folders, and every result is judged by
:mod:`infersweep.agentic.gate`.
"""

from __future__ import annotations

from pathlib import Path

from infersweep.agentic import gate
from infersweep.agentic.result import SCENARIO, SUFFIX
from infersweep.agentic.resultexports import load_json_object
from infersweep.diagnostics import Diagnostic, InputError
from infersweep.matrix.rows import concs as row_concs

ROW_FILE = "row.json"
RULE_CONSISTENCY = "agentic-consistency"  # as gate.RULE_CONSISTENCY: a result edited


def is_agentic_row(row: dict) -> bool:
    return isinstance(row, dict) and row.get("scenario-type") == SCENARIO


def result_files(paths) -> list[Path]:
    """Every ``*.agentic.json`` named by ``paths`` (files as given, folders searched), sorted."""
    out = set()
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            out |= set(p.rglob("*" + SUFFIX))
        elif p.is_file() and p.name.endswith(SUFFIX):
            out.add(p)
    return sorted(out)


def holds_results(path) -> bool:
    p = Path(path)
    return (p.is_file() and p.name.endswith(SUFFIX)) or (
        p.is_dir() and next(p.rglob("*" + SUFFIX), None) is not None)


def _fingerprint(row: dict) -> str:
    from infersweep.changelog.buckets import recipe_fingerprint

    return row.get("recipe-fingerprint") or recipe_fingerprint(row)


JOB_DEPTH = 3  # a job folder's results are at most <job>/logs/<step>/<result>


def job_file(result: Path, name: str) -> Path | None:
    """A file of the job a result belongs to (``row.json``, ``manifest.json``): beside the
    result or in the job folder above it (the first folder up that has one)."""
    return next((d / name for d in list(Path(result).parents)[:JOB_DEPTH]
                 if (d / name).is_file()), None)


def _row_beside(path: Path) -> tuple[dict | None, list[Diagnostic]]:
    """The matrix row of the job a result belongs to (:func:`job_file`)."""
    f = job_file(path, ROW_FILE)
    if f is None:
        return None, []
    try:
        return load_json_object(f, "matrix row"), []
    except InputError as exc:
        return None, exc.diagnostics


def _label(row: dict | None, fp: str | None, conc) -> str:
    if row:
        return f"agentic {row.get('exp-name') or row.get('model-prefix')} c={conc}"
    return f"agentic {str(fp)[:12]} c={conc}"


def examine(paths) -> list[dict]:
    """One entry per result file: its point, its row, and the gate's findings."""
    out = []
    for path in result_files(paths):
        row, diags = _row_beside(path)
        try:
            data = load_json_object(path, "agentic result")
        except InputError as exc:
            out.append({"file": path.as_posix(), "folder": path.parent.as_posix(),
                        "fingerprint": None, "conc": None, "label": f"agentic {path.name}",
                        "row": row, "publishable": False,
                        "problems": [_as_dict(d) for d in diags + exc.diagnostics]})
            continue
        found = diags + gate.judge(data, path, row)
        fp, conc = data.get("recipe_fingerprint"), data.get("conc")
        if row is not None and is_agentic_row(row) and fp != _fingerprint(row):
            found.append(Diagnostic(str(path), 0, 0, f"recipe_fingerprint {str(fp)[:12]}… is "
                                    f"not that of the {ROW_FILE} beside it "
                                    f"({_fingerprint(row)[:12]}…)", gate.EDITED,
                                    RULE_CONSISTENCY))
        out.append({"file": path.as_posix(), "folder": path.parent.as_posix(),
                    "fingerprint": fp, "conc": conc, "label": _label(row, fp, conc),
                    "row": row, "publishable": bool(data.get("publishable")) and not found,
                    "problems": [_as_dict(d) for d in found]})
    return out


def _as_dict(d: Diagnostic) -> dict:
    return {"path": d.path, "line": d.line, "col": d.col, "message": d.message,
            "hint": d.hint, "rule": d.rule}


def as_diagnostic(p: dict) -> Diagnostic:
    """A finding back from :func:`_as_dict` (its rule was named where it was made)."""
    return Diagnostic(**p)


def expected(entries: list[dict], matrix_rows: list[dict] | None) -> dict[tuple, dict]:
    """(fingerprint, conc) -> the row that asks for it: the matrix's agentic rows, else the
    rows beside the results."""
    rows = ([r for r in matrix_rows if is_agentic_row(r) and r.get("conc") is not None
             and not r.get("eval-only")] if matrix_rows is not None
            else [e["row"] for e in entries if is_agentic_row(e["row"])])
    want = {}
    for row in rows:
        for c in row_concs(row):
            want[(_fingerprint(row), c)] = row
    return want


def point_problems(entries: list[dict], matrix_rows: list[dict] | None) -> list[tuple]:
    """(kind, point, message, file) for each missing, duplicate or unexpected point and each
    finding of the gate on a result."""
    want = expected(entries, matrix_rows)
    have: dict[tuple, list[dict]] = {}
    for e in entries:
        have.setdefault((e["fingerprint"], e["conc"]), []).append(e)
    out = []
    for key, row in want.items():
        got = have.get(key, [])
        label = _label(row, key[0], key[1])
        if not got:
            folders = sorted({e["folder"] for e in entries if e["fingerprint"] == key[0]})
            where = f" (the row's other results are in {', '.join(folders)})" if folders else ""
            out.append(("missing", label, "the matrix asks for this point; no agentic result "
                        f"has it{where}", None))
        elif len(got) > 1:
            out.append(("duplicate", label, f"{len(got)} results for one point, in "
                        f"{', '.join(e['folder'] for e in got)}: keep exactly one",
                        got[0]["file"]))
    for key, got in have.items():
        if key not in want and got[0]["fingerprint"] is not None:
            for e in got:
                out.append(("unexpected", e["label"], "an agentic result for a point no matrix "
                            "row asks for", e["file"]))
    for e in entries:
        for p in e["problems"]:
            out.append(("unusable", e["label"], f"[{p['rule']}] {p['message']}"
                        + (f" ({p['hint']})" if p["hint"] else ""), e["file"]))
    return out


def counts(entries: list[dict], matrix_rows: list[dict] | None) -> tuple[int, int]:
    """(points asked for, points with exactly one result that passes)."""
    want = expected(entries, matrix_rows)
    good = 0
    for key in want:
        got = [e for e in entries if (e["fingerprint"], e["conc"]) == key]
        good += len(got) == 1 and not got[0]["problems"]
    return len(want), good

