"""What an eval is judged for: staging (the default, strict) or a scaled-down local run."""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path

JOB = "job"  # `eval check --scope job`: each eval as its own job ran it (the run's own gate)


class Scope(StrEnum):
    FULL = "full"    # staging: at least the thresholds file's minimum number of questions
    LOCAL = "local"  # a scaled-down local run (--limit): the questions it planned, however few


def of_scale_down(scale_down) -> Scope:
    """A job run scaled down (its manifest's ``scale-down`` above 1) runs a scaled-down eval."""
    try:
        return Scope.LOCAL if float(scale_down or 1) > 1 else Scope.FULL
    except (TypeError, ValueError):
        return Scope.FULL


def of_job(eval_folder: Path) -> Scope:
    """The scope a run's own gate judges an eval with: its job's, from the nearest manifest
    above the eval folder (the job's: the eval sits in the manifest's result-dir, e.g.
    ``logs/fixed-seq/eval``); FULL where there is none. Staging always judges FULL."""
    folder = Path(eval_folder).resolve()
    manifest = next((d / "manifest.json" for d in folder.parents
                     if (d / "manifest.json").is_file()), None)
    if manifest is None:
        return Scope.FULL
    try:
        return of_scale_down(json.loads(manifest.read_text()).get("scale-down"))
    except (OSError, ValueError, AttributeError):
        return Scope.FULL
