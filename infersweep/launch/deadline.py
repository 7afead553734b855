"""How long a launch waits for its job, and how long the workflow job around it may run.

One source for both numbers: the launcher cancels its Slurm job at the recipe's time limit
plus the fleet's ``deadline-margin-s`` and then collects what exists; the benchmark job's
``timeout-minutes`` (set per row by the setup job) is that deadline plus an allowance for
everything else the job does, so GitHub never kills the runner before the launcher has
cancelled its job and written the manifest.
"""

from __future__ import annotations

import math

from infersweep.launch.local import time_limit_seconds

FALLBACK_TIME_LIMIT_S = 3600
DEFAULT_MARGIN_S = 3600  # a fleet's deadline-margin-s when it sets none
# checkout, pip install, a cold srt-slurm cache entry, cancelling and collecting, uploads
JOB_ALLOWANCE_S = 1800


def launch_deadline_s(recipe: dict, fleet=None) -> float:
    """The recipe's Slurm time limit (else the fleet's default) plus the fleet's margin
    (a fleet not known here: the defaults)."""
    limit = time_limit_seconds((recipe.get("slurm") or {}).get("time_limit"))
    if limit is None and fleet is not None:
        limit = time_limit_seconds(fleet.srtslurm.get("default_time_limit"))
    margin = DEFAULT_MARGIN_S if fleet is None else fleet.deadline_margin_s
    return float((limit or FALLBACK_TIME_LIMIT_S) + margin)


def job_timeout_minutes(recipe: dict, fleets=()) -> int:
    """``timeout-minutes`` for the job that launches ``recipe`` on any of ``fleets``."""
    deadline = max(launch_deadline_s(recipe, f) for f in (list(fleets) or [None]))
    return math.ceil((deadline + JOB_ALLOWANCE_S) / 60)
