"""A run's rows in one aggregate: stable order, one row per point across rerun attempts.

The rule for reruns: of every row of one point (config key, recipe, ISL/OSL, scale-down,
concurrency), the newest successful attempt wins; with no successful one, the newest attempt.
Rows of the same attempt are the same measurement copied forward by a rerun, and one is kept.
The winner lists every row it replaced (attempt, run id, file, whether it was successful).
Two rows of one point, run and attempt that say different things are not a copy: which one
is the measurement cannot be told from the files, so neither is kept and both files are
named (:func:`clashes`, rule ``results-duplicate-point``).
"""

from __future__ import annotations

import csv
import io
import os
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from infersweep.config.schema import validate_data
from infersweep.diagnostics import Diagnostic, InputError
from infersweep.matrix.rows import concs as row_concs
from infersweep.matrix.rows import engine_revision
from infersweep.recipe.workload import EVAL_SUBDIR
from infersweep.results import agenticagg, fastschema, jobpaths, plausible, process, sources
from infersweep.rowjobs.manifest import now

AGGREGATE_VERSION = 1
ROW_SCHEMA = "results-row"
AGGREGATE_SCHEMA = "results-aggregate"
# the columns of the CSV, in order (the JSON holds every field)
CSV_COLUMNS = ("config_key", "recipe_name", "topology", "hw", "framework", "precision", "isl",
               "osl", "scale_down", "conc", "attempt", "successful", "completed", "num_prompts",
               "failed", "num_prefill_gpu", "num_decode_gpu", "tput_per_gpu",
               "output_tput_per_gpu", "input_tput_per_gpu", "median_intvty", "p99_intvty",
               "median_ttft", "p99_ttft", "median_tpot", "p99_tpot", "median_e2el",
               "power_valid", "image", "srt_slurm_commit", "engine_revision", "run_id",
               "job_id", "recipe_fingerprint")


def point_key(r: dict) -> tuple:
    """What makes two rows the same point."""
    return (r["config_key"], r["recipe_name"], r["isl"], r["osl"], r["scale_down"], r["conc"])


def sort_key(r: dict) -> tuple:
    return (r["config_key"], r["recipe_name"], r["isl"], r["osl"], r["scale_down"], r["conc"],
            r.get("attempt", 0))


@dataclass
class Gathered:
    rows: list[dict] = field(default_factory=list)       # every row read or processed
    missing: list[dict] = field(default_factory=list)    # manifest points without a file
    expected: list[dict] = field(default_factory=list)   # points the matrix rows asked for
    unexpected: list[dict] = field(default_factory=list)  # files nobody asked for
    errors: list[tuple[str, Diagnostic]] = field(default_factory=list)  # (point label, why)
    warnings: list[str] = field(default_factory=list)
    jobs: list[dict] = field(default_factory=list)        # one per manifest: state and reason
    agentic: list[dict] = field(default_factory=list)     # agentic results, judged


def _expected_of(point: process.Point) -> dict:
    row, prov = point.row or {}, point.manifest["provenance"]
    return {"config_key": prov["config-key"], "recipe_name": point.manifest["name"],
            "isl": int(row.get("isl", point.entry["isl"])),
            "osl": int(row.get("osl", point.entry["osl"])),
            "scale_down": point.manifest["scale-down"], "conc": point.entry["conc"],
            "image": row.get("image"),
            "engine_revision": engine_revision(row),
            "recipe_fingerprint": point.fingerprint}


def _eval_only_job(path: Path, out: Gathered) -> None:
    """An eval-only job (no points): its state, and whether its eval folder holds an
    ``eval.json`` (``eval check`` judges what is in it), for ``results check --matrix``."""
    data, row, fp = process.job_of(path)
    if not (row or {}).get("eval-only"):
        return
    prov = data["provenance"]
    folder = jobpaths.inside(path, f"{data['result-dir']}/{EVAL_SUBDIR}", "/result-dir",
                             os.path.realpath(path.parent))
    out.jobs.append({"manifest": path.as_posix(), "config_key": prov["config-key"],
                     "recipe_name": data["name"], "job_id": prov["job-id"],
                     "job_state": prov["job-state"], "job_reason": prov["job-reason"],
                     "eval_only": True, "recipe_fingerprint": fp,
                     "eval": (folder / "eval.json").is_file()})


def _from_manifest(path: Path, out: Gathered, allow_incomplete: bool) -> None:
    try:
        points = process.points_of(path)
        if not points:
            _eval_only_job(path, out)
            return
    except InputError as exc:
        out.errors += [(str(path), d) for d in exc.diagnostics]
        return
    first = points[0]
    if first.row is not None and first.row.get("scenario-type") == "agentic-coding":
        return  # its *.agentic.json results are judged by the agentic gates (gatepoints)
    prov = first.manifest["provenance"]
    out.jobs.append({"manifest": path.as_posix(), "config_key": prov["config-key"],
                     "recipe_name": first.manifest["name"], "job_id": prov["job-id"],
                     "job_state": prov["job-state"], "job_reason": prov["job-reason"]})
    concs = {p.entry["conc"] for p in points}
    if first.row is not None:  # the matrix row may ask for points the manifest lacks
        for c in row_concs(first.row) if first.row.get("conc") is not None else []:
            if c not in concs:
                e = _expected_of(first)
                e["conc"] = c
                out.expected.append(e)
                out.missing.append({**e, "attempt": prov["attempt"], "status": "missing",
                                    "reason": "the matrix row asks for it; the manifest has "
                                              "no such point", "manifest": path.as_posix()})
    for u in first.manifest["unexpected-files"]:
        out.unexpected.append({"config_key": prov["config-key"],
                               "recipe_name": first.manifest["name"],
                               "file": u["file"], "reason": u["reason"],
                               "manifest": path.as_posix()})
    for p in points:
        e = _expected_of(p)
        out.expected.append(e)
        try:
            done = process.process_point(p, allow_incomplete=allow_incomplete)
        except InputError as exc:
            out.errors += [(p.label, d) for d in exc.diagnostics]
            out.missing.append({**e, "attempt": p.entry["attempt"], "status": "unusable",
                                "reason": reason(exc.diagnostics[0], p.label),
                                "file": exc.diagnostics[0].path,
                                "manifest": path.as_posix()})
            continue
        out.warnings += done.warnings
        if done.row is None:
            out.missing.append({**e, "attempt": p.entry["attempt"], "status": p.entry["status"],
                                "reason": p.entry["reason"], "manifest": path.as_posix()})
        else:
            out.rows.append(done.row)


def reason(diag: Diagnostic, label: str) -> str:
    """Why a point is unusable, as the gate prints it: ``[rule] message (hint)``."""
    why = diag.message.removeprefix(f"{label}: ")
    if diag.rule:
        why = f"[{diag.rule}] {why}"
    return why + (f" ({diag.hint})" if diag.hint else "")


def _label(r: dict) -> str:
    return f"{r['config_key']} {r['recipe_name']} c={r['conc']}"


def _plausible_rows(rows: list[dict], path: Path, pointer: str, out: Gathered) -> list[dict]:
    """The rows of a file that pass :mod:`infersweep.results.plausible`; each one that does
    not becomes an error and an unusable point (the gate names it, collect refuses)."""
    kept = []
    for i, r in enumerate(rows):
        found = plausible.check(r, plausible.Naming(prefix=pointer.format(i=i)))
        if not found:
            kept.append(r)
            continue
        label = _label(r)
        diags = [Diagnostic(str(path), 0, 0, f"{label}: {f.message}", f.hint, f.rule)
                 for f in found]
        out.errors += [(label, d) for d in diags]
        out.missing.append({k: r[k] for k in ("config_key", "recipe_name", "isl", "osl",
                                              "scale_down", "conc", "attempt")}
                           | {"status": "unusable", "reason": reason(diags[0], label),
                              "file": str(path), "manifest": str(path)})
    return kept


def _from_file(path: Path, out: Gathered, agentic_results: bool = True) -> None:
    data = sources.load_json(path, "results file")
    kind, schema = ("aggregate", AGGREGATE_SCHEMA) if (
        isinstance(data, dict) and "aggregate-version" in data) else ("processed row", ROW_SCHEMA)
    found = [] if fastschema.valid(data, schema) else validate_data(data, schema)
    if found:
        out.errors.append((str(path), Diagnostic(
            str(path), 0, 0, f"not a {kind}: " + "; ".join(found[:3]),
            "pass files written by `results process` or `results collect`", "schema")))
        return
    if kind == "aggregate":
        if agentic_results:
            out.agentic += agenticagg.reexamine(data.get("agentic") or [], path)
        out.rows += _plausible_rows(data["rows"], path, "/rows/{i}/", out)
        out.missing += data["missing"]
        out.expected += data["expected"]
        out.unexpected += data["unexpected"]
        out.jobs += data["jobs"]
    else:
        out.rows += _plausible_rows([data], path, "/", out)


def gather(paths, *, allow_incomplete: bool = False, allow_empty: bool = False,
           agentic_results: bool = True) -> Gathered:
    """Every row, missing point and expected point named by ``paths``; with
    ``agentic_results`` false, agentic results below them are left out (staging reads them
    from artifacts of their own)."""
    from infersweep.agentic import gatepoints

    out = Gathered()
    # a folder of agentic results holds no manifest; its results are judged by their own gates
    agentic = [p for p in paths if agentic_results and gatepoints.holds_results(p)]
    out.agentic = gatepoints.examine(agentic)
    manifests, files = set(), set()
    for p in paths:
        if p in agentic and Path(p).is_file():
            continue
        m, f = sources.expand([p], allow_empty=allow_empty or p in agentic)
        manifests.update(m)
        files.update(f)
    manifests, files = sorted(manifests), sorted(files)
    for m in manifests:
        _from_manifest(m, out, allow_incomplete)
    for f in files:
        _from_file(f, out, agentic_results)
    out.agentic = agenticagg.unique(out.agentic)
    out.errors += clashes(out.rows)
    return out


CLASH_RULE = "results-duplicate-point"
WHERE = ("result_file", "replaced")  # where a copy was kept and what it replaced


def clashes(rows: list[dict]) -> list[tuple[str, Diagnostic]]:
    """(label, error) for every point, run and attempt whose rows differ in anything but
    where they were kept: a copy of a job folder with other numbers is never one measurement."""
    first: dict[tuple, dict] = {}
    found = []
    for r in sorted(rows, key=lambda r: str(r.get("result_file"))):
        ident = (*point_key(r), r.get("run_id"), r.get("attempt"))
        seen = first.setdefault(ident, r)
        if seen is r:
            continue
        changed = sorted(k for k in set(seen) | set(r)
                         if k not in WHERE and seen.get(k) != r.get(k))
        if not changed:
            continue  # the same measurement copied forward
        label = _label(r)
        shown = ", ".join(f"{k} {seen.get(k)!r} against {r.get(k)!r}" for k in changed[:3])
        more = f" and {len(changed) - 3} more field(s)" if len(changed) > 3 else ""
        found.append((f"{label} run {r.get('run_id')} attempt {r.get('attempt')}", Diagnostic(
            str(r.get("result_file")), 0, 0,
            f"{label}: two job folders hold run {r.get('run_id')} attempt {r.get('attempt')} "
            f"of this point and they differ ({shown}{more}): {seen.get('result_file')} and "
            f"{r.get('result_file')}",
            "one point of one attempt is one measurement: remove the folder that is not the "
            "run's own (or re-run the sweep)", CLASH_RULE)))
    return found


def _summary(r: dict) -> dict:
    return {"attempt": r["attempt"], "run_id": r["run_id"], "job_id": r["job_id"],
            "successful": r["successful"], "result_file": r["result_file"]}


def deduplicate(rows: list[dict]) -> list[dict]:
    """One row per point by the rerun rule, sorted; each winner lists what it replaced."""
    by_point: dict[tuple, list[dict]] = {}
    for r in rows:
        by_point.setdefault(point_key(r), []).append(r)
    out = []
    for key in sorted(by_point, key=lambda k: tuple(str(x) for x in k)):
        group = sorted(by_point[key], key=lambda r: (r["successful"], r["attempt"],
                                                     r["result_file"]), reverse=True)
        winner = dict(group[0])
        seen = {(winner["attempt"], winner["run_id"])}
        replaced = list(winner.get("replaced", []))
        for r in group[1:]:
            ident = (r["attempt"], r["run_id"])
            if ident in seen:
                continue  # the same measurement copied forward
            seen.add(ident)
            replaced.append(_summary(r))
            replaced += r.get("replaced", [])
        winner["replaced"] = replaced
        out.append(winner)
    out.sort(key=sort_key)
    return out


def _dedupe_dicts(items: list[dict], key) -> list[dict]:
    seen, out = set(), []
    for i in items:
        k = key(i)
        if k not in seen:
            seen.add(k)
            out.append(i)
    return out


def aggregate(g: Gathered) -> dict:
    rows = deduplicate(g.rows)
    have = {point_key(r) for r in rows}
    missing = [m for m in g.missing if point_key(m) not in have]
    missing = sorted(_dedupe_dicts(missing, point_key), key=sort_key)
    expected = sorted(_dedupe_dicts(g.expected, point_key), key=sort_key)
    unexpected = sorted(_dedupe_dicts(g.unexpected, lambda u: (u["manifest"], u["file"])),
                        key=lambda u: (u["config_key"], u["recipe_name"], u["file"]))
    jobs = sorted(_dedupe_dicts(g.jobs, lambda j: j["manifest"]), key=lambda j: j["manifest"])
    agg = {"aggregate-version": AGGREGATE_VERSION, "created": now(),
           "rule": "newest successful attempt of each point wins",
           "rows": rows, "missing": missing, "expected": expected,
           "unexpected": unexpected, "jobs": jobs}
    if g.agentic:  # the gate's entries, for `results check`; to_json writes the results
        agg["agentic"] = g.agentic
    return agg


def to_csv(agg: dict) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for r in agg["rows"]:
        w.writerow(["" if r.get(c) is None else r.get(c) for c in CSV_COLUMNS])
    return buf.getvalue()


def raise_errors(g: Gathered) -> None:
    if g.errors:
        raise InputError([d for _, d in g.errors])


def to_json(agg: dict) -> bytes:
    """The aggregate as written: the gate's agentic entries become ``agentic``, the results
    themselves (:func:`infersweep.results.agenticagg.entries`), absent when there are none."""
    out = {k: v for k, v in agg.items() if k != "agentic"}
    if agg.get("agentic"):
        out["agentic"] = agenticagg.entries(agg["agentic"])
    return orjson.dumps(out, option=orjson.OPT_INDENT_2) + b"\n"
