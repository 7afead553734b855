"""A run's agentic-coding artifacts: which they are, and each job's folder rebuilt from them.

InferenceX uploads two artifacts per agentic job: ``bmk_agentic_<name>`` (its result) and
``agentic_<name>`` (the replay's raw exports). Ours are named the same way, ``<name>`` being
the job's ``<row id>_<attempt>`` as for ``bmk_<row id>_<attempt>``: the first holds the job's
``row.json`` and ``*.agentic.json`` results, the second the export folders at the paths the
results name (``artifacts``). Both are unpacked, through the same safe extractor as every
artifact, into one folder per job, so each result sits beside its exports again and the
agentic gates can recompute it. A file that both artifacts hold refuses the pair: one of them
would silently replace the other's evidence.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from infersweep.stage import artifacts as arts

RESULTS_PREFIX = "bmk_agentic_"
EXPORTS_PREFIX = "agentic_"
FOLDER = "agentic"


@dataclass(frozen=True)
class Pair:
    name: str                  # <name>: the job's row id and attempt
    results: dict              # the bmk_agentic_<name> artifact (as GitHub lists it)
    exports: dict | None       # the agentic_<name> artifact, when the run uploaded one


def pairs(listed: list[dict]) -> list[Pair]:
    """Every agentic job of the run, by name (the newest artifact of each name)."""
    names = sorted({str(a.get("name")) for a in listed
                    if str(a.get("name", "")).startswith(RESULTS_PREFIX)
                    and len(str(a.get("name"))) > len(RESULTS_PREFIX)})
    out = []
    for full in names:
        name = full[len(RESULTS_PREFIX):]
        out.append(Pair(name, arts.newest(listed, full),
                        arts.newest(listed, EXPORTS_PREFIX + name)))
    return out


def artifact_names(p: Pair) -> list[str]:
    return [RESULTS_PREFIX + p.name] + ([EXPORTS_PREFIX + p.name] if p.exports else [])


def _merge(src: Path, dst: Path, label: str) -> None:
    """Move every file of ``src`` into ``dst``; a path both hold is refused."""
    for f in sorted(p for p in src.rglob("*") if p.is_file()):
        rel = f.relative_to(src)
        target = dst / rel
        if target.exists() or any((dst / q).is_file() for q in rel.parents
                                  if q != Path(".")):
            raise arts.UnsafeArchive("stage-artifact-name",
                                     f"{label}: {rel.as_posix()} is in both artifacts of the "
                                     "job; the exports must not replace the results")
        target.parent.mkdir(parents=True, exist_ok=True)
        f.rename(target)


def download(gh, pair: Pair, root: Path, limits: arts.Limits) -> Path:
    """The job folder ``root/agentic/<name>``: the results artifact unpacked, the exports
    artifact unpacked beside it and merged in. :class:`GitHubError` and
    :class:`~infersweep.stage.artifacts.UnsafeArchive` as :func:`artifacts.download`."""
    job = root / FOLDER / pair.name
    arts.download(gh, pair.results, job, limits)
    if pair.exports is not None:
        spool = root / FOLDER / f".{pair.name}.exports"
        try:
            arts.download(gh, pair.exports, spool, limits)
            _merge(spool, job, EXPORTS_PREFIX + pair.name)
        except BaseException:
            shutil.rmtree(job, ignore_errors=True)
            raise
        finally:
            shutil.rmtree(spool, ignore_errors=True)
    return job
