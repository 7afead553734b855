"""An agentic job's two artifacts: its folder split for upload, and joined again for the gate.

InferenceX uploads an agentic job as ``bmk_agentic_<name>`` (its result) and
``agentic_<name>`` (the replay's raw exports, without ``inputs.json`` and
``profile_export_raw.jsonl``). Ours are named the same way, ``<name>`` being the job's
``<row id>_<attempt>`` as for a fixed-seq-len job's ``bmk_<row id>_<attempt>``:

- :func:`split` partitions the job's result folder into two trees with the same relative
  paths: the exports (every folder a result names as its ``artifacts``, or a replay's plan
  as its ``artifact_dir``, minus :data:`NOT_UPLOADED`) and the results (everything else:
  manifest, row, recipe, logs, ``*.agentic.json``, minus :data:`SKIPPED_DIRS`). No file is
  in both, which is what staging requires of the pair (``infersweep/stage/agenticarts.py``).
- :func:`join` puts each pair back together after a download (one folder per artifact):
  ``<out>/<name>`` holds the results artifact with the exports merged in, so every result
  sits beside its exports again and ``results check`` can judge it; a file both hold is
  refused.

Files are hard-linked where the file system allows (the exports are the bulk of the job),
copied otherwise; links inside the job folder are never followed or uploaded.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from infersweep.diagnostics import Diagnostic, InputError

RESULTS_PREFIX = "bmk_agentic_"
EXPORTS_PREFIX = "agentic_"
RESULT_SUFFIX = ".agentic.json"
PLAN_FILE = "replay-plan.json"
# every request body the client sent (InferenceX leaves both out: large, and rebuilt from the
# traces and the seed)
NOT_UPLOADED = frozenset({"inputs.json", "profile_export_raw.jsonl"})
# the tokenizer laid out as a hub cache for the client offline: a copy, not evidence
SKIPPED_DIRS = frozenset({"hf-home"})
RULE = "agentic-artifacts"


def is_agentic_row(row: dict) -> bool:
    return row.get("scenario-type") == "agentic-coding"


def _inside(path: Path, root: Path) -> Path | None:
    """``path`` resolved, when it lies inside ``root`` (else None)."""
    try:
        resolved = path.resolve()
        resolved.relative_to(root)
    except (OSError, ValueError):
        return None
    return resolved


def _read_json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def export_dirs(root: Path) -> list[Path]:
    """The replay exports under ``root``: the folder each ``*.agentic.json`` names as its
    ``artifacts`` (relative to the result's folder), and each replay plan's ``artifact_dir``
    (a point whose result was never written still has its exports), when inside ``root``."""
    root = Path(root).resolve()
    found = set()
    for result in root.rglob(f"*{RESULT_SUFFIX}"):
        rel = _read_json(result).get("artifacts")
        if isinstance(rel, str) and rel:
            found.add(_inside(result.parent / rel, root))
    for plan in root.rglob(PLAN_FILE):
        where = (_read_json(plan).get("plan") or {}).get("artifact_dir")
        if isinstance(where, str) and where:
            found.add(_inside(plan.parent / where, root))
    return sorted(p for p in found if p is not None and p.is_dir() and p != root)


def _place(src: Path, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


@dataclass
class Split:
    results: list[str] = field(default_factory=list)  # relative paths, sorted
    exports: list[str] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)  # not uploaded, and why

    def describe(self) -> str:
        return (f"{len(self.results)} file(s) in the results, {len(self.exports)} in the "
                f"exports, {len(self.left_out)} left out")


def _files(root: Path):
    """Every regular file under ``root`` (links are neither followed nor listed)."""
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            path = Path(dirpath) / name
            if not path.is_symlink() and path.is_file():
                yield path


def split(root: Path, results_out: Path, exports_out: Path) -> Split:
    """Partition the job result folder ``root`` into ``results_out`` and ``exports_out``
    (same relative paths, no file in both); ``root`` is left as it was."""
    root = Path(root).resolve()
    out = Split()
    if not root.is_dir():
        return out
    exports = export_dirs(root)
    for path in _files(root):
        rel = path.relative_to(root)
        if SKIPPED_DIRS & set(rel.parts[:-1]):
            out.left_out.append(f"{rel.as_posix()} (tokenizer copy)")
            continue
        in_exports = any(path.is_relative_to(d) for d in exports)
        if in_exports and path.name in NOT_UPLOADED:
            out.left_out.append(f"{rel.as_posix()} (request bodies)")
            continue
        _place(path, (exports_out if in_exports else results_out) / rel)
        (out.exports if in_exports else out.results).append(rel.as_posix())
    return out


def _error(where: str, message: str, hint: str = "") -> Diagnostic:
    return Diagnostic(where, 0, 0, message, hint, RULE)


@dataclass
class Joined:
    jobs: list[Path] = field(default_factory=list)  # <out>/<name>, one per results artifact
    problems: list[Diagnostic] = field(default_factory=list)


def join(results_root: Path, exports_root: Path, out: Path) -> Joined:
    """Each ``results_root/bmk_agentic_<name>`` moved to ``out/<name>`` with
    ``exports_root/agentic_<name>`` merged in. A file both artifacts hold, or exports with no
    results artifact, is a problem (that job is left out: its points stay missing)."""
    results_root, exports_root, out = Path(results_root), Path(exports_root), Path(out)
    done = Joined()
    names = sorted(p.name[len(RESULTS_PREFIX):] for p in results_root.glob(f"{RESULTS_PREFIX}*")
                   if p.is_dir() and len(p.name) > len(RESULTS_PREFIX))
    for name in names:
        src, job = results_root / f"{RESULTS_PREFIX}{name}", out / name
        exports = exports_root / f"{EXPORTS_PREFIX}{name}"
        clash = _clashes(src, exports) if exports.is_dir() else []
        if clash:
            done.problems.append(_error(
                f"{EXPORTS_PREFIX}{name}", f"{len(clash)} file(s) are in both artifacts of the "
                f"job, e.g. {clash[0]}; the exports must not replace the results",
                "the benchmark job's `agentic artifacts split` writes each file to one of them"))
            continue
        job.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(src), str(job))
        if exports.is_dir():
            for path in _files(exports):
                target = job / path.relative_to(exports)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.move(str(path), str(target))
            shutil.rmtree(exports, ignore_errors=True)
        done.jobs.append(job)
    joined = set(names)
    if exports_root.is_dir():
        for p in sorted(exports_root.glob(f"{EXPORTS_PREFIX}*")):
            if p.is_dir() and p.name[len(EXPORTS_PREFIX):] not in joined:
                done.problems.append(_error(
                    p.name, f"exports with no {RESULTS_PREFIX}{p.name[len(EXPORTS_PREFIX):]} "
                    "artifact beside them", "the job's results upload failed or was not "
                    "downloaded; its points count as missing"))
    return done


def _clashes(results: Path, exports: Path) -> list[str]:
    """Relative paths of ``exports`` that ``results`` holds as a file or a folder's file."""
    found = []
    for path in _files(exports):
        rel = path.relative_to(exports)
        if (results / rel).exists() or any((results / q).is_file() for q in rel.parents
                                           if q != Path(".")):
            found.append(rel.as_posix())
    return found


def require_dir(path: Path, what: str) -> None:
    if Path(path).exists() and not Path(path).is_dir():
        raise InputError(_error(str(path), f"{what} is not a folder"))
