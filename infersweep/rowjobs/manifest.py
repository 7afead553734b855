"""The result manifest: every point a job was asked for, the file that holds it or why not.

One manifest per job (one matrix row), written atomically beside the job's results and
checked against ``schemas/result-manifest.schema.json``. Every executor builds it with
:func:`collect` from the directory its benchmark step wrote to, so a manifest means the same
thing whether the job ran on the simulator here or on a Slurm cluster. A later attempt reads
the previous manifest and runs only the points :func:`rerun_concs` names.
"""

from __future__ import annotations

import datetime as _dt
import json
import re
from pathlib import Path

from infersweep.atomic import write_atomic
from infersweep.config.schema import validate_data, validate_doc
from infersweep.diagnostics import Diagnostic, InputError
from infersweep.recipe import topology
from infersweep.rowjobs.executor import JobState, Provenance
from infersweep.yamldoc import load_yaml

SCHEMA = "result-manifest"
VERSION = 1
FILENAME = "manifest.json"
PRESENT, INCOMPLETE, MISSING = "present", "incomplete", "missing"
# result keys a manifest keeps per point (enough for the end-of-run table and a quick look)
METRICS = ("duration", "request_throughput", "output_throughput", "total_token_throughput",
           "median_ttft_ms", "p99_ttft_ms", "mean_tpot_ms", "median_tpot_ms", "p99_tpot_ms",
           "median_e2el_ms")


def now() -> str:
    return _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def gpu_counts(recipe: dict) -> dict[str, int]:
    """GPUs per role from the recipe's ``resources`` (aggregated workers count as decode)."""
    counts = {"prefill": 0, "decode": 0}
    for role in topology.roles(recipe.get("resources") or {}):
        key = "prefill" if role.name == "prefill" else "decode"
        counts[key] += role.workers * role.gpus_per_worker
    counts["total"] = counts["prefill"] + counts["decode"]
    return counts


def _job_context(state: JobState, job_reason: str | None) -> str:
    """What happened to the job, for a point it did not finish."""
    why = f" ({job_reason})" if job_reason else ""
    if state is JobState.CANCELLED:
        return f"the job was cancelled before this point finished{why}"
    if not state.terminal:
        return f"the job was {state} when collected{why}"
    return f"the job ended {state}{why}"


def _missing_reason(state: JobState, job_reason: str | None) -> str:
    if state is JobState.COMPLETED:
        return "no result file: the benchmark step ended without writing it"
    return "not written: " + _job_context(state, job_reason)


AGENTIC_SUFFIX = ".agentic.json"


def read_agentic_point(path: Path, conc: int) -> dict:
    """An agentic point: present when its result passes the agentic gates (judged from the
    client's exports beside it, not from what the result claims)."""
    from infersweep.agentic import gate
    from infersweep.agentic.resultexports import load_json_object

    out: dict = {"status": MISSING, "completed": None, "failed": None, "metrics": None,
                 "reason": None}
    try:
        data = load_json_object(path, "agentic result")
    except InputError as exc:
        out["reason"] = f"result file cannot be used: {exc.diagnostics[0].message}"
        return out
    if data.get("conc") != conc:
        out["reason"] = f"result file is for concurrency {data.get('conc')!r}, not {conc}"
        return out
    accounting = data.get("request_accounting") or {}
    ok, failed = data.get("num_requests_successful"), accounting.get("error_request_count")
    out["completed"] = ok if isinstance(ok, int) and not isinstance(ok, bool) else None
    out["failed"] = failed if isinstance(failed, int) and not isinstance(failed, bool) else None
    tput = ((data.get("request_metrics") or {}).get("throughput") or {})
    per_gpu = tput.get("per_gpu") or {}
    latency = (data.get("request_metrics") or {}).get("latency") or {}
    def ms(metric: str, stat: str):  # the agentic result keeps seconds, a manifest ms
        v = (latency.get(metric) or {}).get(stat)
        return v * 1000 if isinstance(v, (int, float)) and not isinstance(v, bool) else None

    found = {"total_token_throughput": (tput.get("total") or {}).get("tokens_per_second"),
             "total_tput_per_gpu": per_gpu.get("total_tput_tps"),
             "median_ttft_ms": ms("ttft", "p50"), "p99_ttft_ms": ms("ttft", "p99"),
             "median_tpot_ms": ms("tpot", "p50"), "median_e2el_ms": ms("e2el", "p50")}
    out["metrics"] = {k: v for k, v in found.items()
                      if isinstance(v, (int, float)) and not isinstance(v, bool)}
    problems = gate.judge(data, path)
    if problems:
        out["status"] = INCOMPLETE
        out["reason"] = problems[0].message
    else:
        out["status"] = PRESENT
    return out


def read_point(path: Path, conc: int, requested: int | None) -> dict:
    """Status, counts, metrics and (when not usable) the reason, from one result file."""
    if path.name.endswith(AGENTIC_SUFFIX):
        return read_agentic_point(path, conc)
    out: dict = {"status": MISSING, "completed": None, "failed": None, "metrics": None,
                 "reason": None}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        out["reason"] = f"result file cannot be read: {exc}"
        return out
    except json.JSONDecodeError as exc:
        out["reason"] = f"result file is not valid JSON (line {exc.lineno}: {exc.msg})"
        return out
    if not isinstance(data, dict):
        out["reason"] = "result file is not a JSON object"
        return out
    got = data.get("max_concurrency")
    if isinstance(got, bool) or not isinstance(got, int):
        out["reason"] = f"result file has no parsable concurrency (max_concurrency={got!r})"
        return out
    if got != conc:
        out["reason"] = f"result file is for concurrency {got}, not {conc}"
        return out
    completed, failed = data.get("completed"), data.get("failed")
    out["completed"] = completed if isinstance(completed, int) else None
    out["failed"] = failed if isinstance(failed, int) else None
    out["metrics"] = {k: data[k] for k in METRICS
                      if isinstance(data.get(k), (int, float)) and not isinstance(data[k], bool)}
    asked = data.get("num_prompts")
    if asked != requested:
        out["status"] = INCOMPLETE
        out["reason"] = f"the client was asked for {asked} prompts, the recipe for {requested}"
    elif out["completed"] != requested:
        out["status"] = INCOMPLETE
        out["reason"] = f"completed {completed} of {requested} requests"
    else:
        out["status"] = PRESENT
    return out


def _rel(path: Path, base: Path) -> str:
    try:
        return path.resolve().relative_to(base.resolve()).as_posix()
    except ValueError:
        return path.resolve().as_posix()


def unexpected_files(result_dir: Path, name: str, expected: set[int]) -> list[dict]:
    """Result files nobody asked for: an unknown concurrency or none in the name."""
    if not result_dir.is_dir():
        return []
    pattern = re.compile(rf"^{re.escape(name)}-c(\d+)(?:{re.escape(AGENTIC_SUFFIX[:-5])})?\.json$")
    out = []
    for path in sorted(result_dir.glob("*.json")):
        m = pattern.match(path.name)
        if m is None:
            out.append({"file": path.name,
                        "reason": f"no parsable concurrency in the name (expected {name}-c<conc>.json)"})
        elif int(m.group(1)) not in expected:
            out.append({"file": path.name,
                        "reason": f"concurrency {int(m.group(1))} was not requested"})
    return out


def collect(*, recipe: dict, points, isl: int | None, osl: int | None, result_dir: Path, manifest_dir: Path,
            provenance: Provenance, executor: str, job_id: str | None, job_state: JobState,
            job_reason: str | None = None, scale_down: float = 1.0,
            carried: list[dict] | None = None) -> dict:
    """The manifest of one job from what exists in ``result_dir`` now.

    ``points`` are the recipe's points (``Rendered.points``) this job ran; ``carried`` are
    points taken over from an earlier attempt (already in the manifest's shape)."""
    carried = list(carried or [])
    entries = []
    for p in points:
        path = result_dir / p.result_file
        entry = {"conc": p.conc, "isl": isl, "osl": osl, "requested": p.num_prompts or None,
                 "warmups": p.num_warmups, "file": None, "attempt": provenance.attempt}
        if path.is_file():
            entry.update(read_point(path, p.conc, p.num_prompts))
            entry["file"] = _rel(path, manifest_dir)
            if entry["status"] != PRESENT and job_state is not JobState.COMPLETED:
                entry["reason"] += "; " + _job_context(job_state, job_reason)
        else:
            entry.update({"status": MISSING, "completed": None, "failed": None, "metrics": None,
                          "reason": _missing_reason(job_state, job_reason)})
        entries.append(entry)
    entries = sorted(carried + entries, key=lambda e: e["conc"])
    expected = {e["conc"] for e in entries}
    manifest = {
        "manifest-version": VERSION,
        "name": recipe["name"],
        "provenance": {
            "config-key": provenance.config_key, "image": provenance.image,
            "srt-slurm-commit": provenance.srt_slurm_commit,
            "atom-revision": provenance.atom_revision, "executor": executor,
            "job-id": job_id, "job-state": str(job_state), "job-reason": job_reason,
            "run-id": provenance.run_id, "attempt": provenance.attempt,
            "collected": now(),
        },
        "gpus": gpu_counts(recipe),
        "scale-down": scale_down,
        "result-dir": _rel(result_dir, manifest_dir),
        "points": entries,
        "unexpected-files": unexpected_files(result_dir, recipe["name"], expected),
    }
    manifest["complete"] = not problems(manifest)
    return manifest


def problems(manifest: dict) -> list[str]:
    """Why this manifest is not a complete result (empty when it is)."""
    out = []
    prov = manifest["provenance"]
    where = f"{prov['config-key']} {manifest['name']} (job {prov['job-id']})"
    if prov["job-state"] != str(JobState.COMPLETED):
        why = f": {prov['job-reason']}" if prov.get("job-reason") else ""
        out.append(f"{where}: job ended {prov['job-state']}{why}")
    for p in manifest["points"]:
        if p["status"] != PRESENT:
            out.append(f"{where}: point c={p['conc']} {p['status']}: {p['reason']}")
    for u in manifest["unexpected-files"]:
        out.append(f"{where}: unexpected result file {u['file']}: {u['reason']}")
    ev = manifest.get("eval")
    if ev is not None and not manifest["points"] and ev["status"] != PRESENT:
        out.append(f"{where}: eval {ev['status']}: the eval is all an eval-only job runs "
                   f"({ev['dir']})")
    return out


def validate(manifest: dict) -> list[str]:
    return validate_data(manifest, SCHEMA)


def write(path: Path, manifest: dict) -> None:
    """Check the manifest against its schema, then write it atomically."""
    found = validate(manifest)
    if found:  # a bug in the builder, never the user's input
        raise ValueError("manifest does not match its schema: " + "; ".join(found))
    write_atomic(path, json.dumps(manifest, indent=2) + "\n")


def load(path: str | Path) -> dict:
    """A manifest from a file, checked against the schema (located errors on bad input)."""
    path = Path(path)
    if not path.is_file():
        raise InputError(Diagnostic(str(path), 0, 0, "no such manifest file",
                                    "pass the manifest.json an earlier `sweep run` wrote",
                                    "manifest"))
    try:
        json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(Diagnostic(str(path), exc.lineno, exc.colno,
                                    f"not valid JSON: {exc.msg}",
                                    "pass the manifest.json an earlier `sweep run` wrote",
                                    "manifest")) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(Diagnostic(str(path), 0, 0, f"cannot read the manifest: {exc}",
                                    rule="manifest")) from None
    doc = load_yaml(path)
    found = validate_doc(doc, SCHEMA)
    if found:
        raise InputError(found)
    return doc.data


def rerun_concs(previous: dict, concs) -> list[int]:
    """The concurrencies of ``concs`` an attempt after ``previous`` still has to run."""
    done = {p["conc"] for p in previous["points"] if p["status"] == PRESENT}
    return [c for c in concs if c not in done]


def identity(manifest: dict) -> tuple:
    """What makes two manifests results of the same row: config key, recipe, ISL/OSL."""
    first = manifest["points"][0] if manifest["points"] else {}
    return (manifest["provenance"]["config-key"], manifest["name"],
            manifest.get("scale-down"), first.get("isl"), first.get("osl"))
