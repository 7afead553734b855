"""How long a launch waits for its job, and how long the workflow job around it may run.

One source for both numbers: the launcher cancels its Slurm job at the recipe's time limit
plus the fleet's ``deadline-margin-s`` and then collects what exists; the benchmark job's
``timeout-minutes`` (set per row by the setup job) is that deadline plus an allowance for
everything else the job does, so GitHub never kills the runner before the launcher has
cancelled its job and written the manifest.

An agentic-coding row's replay lasts what its row says, not what its recipe's Slurm time
limit allows: its deadline is :func:`agentic_budget_s` (the engine's start, then per
concurrency the replay's set-up, warm-up window, measured window and drain, the windows
scaled down as the replay scales them) when that is shorter than the time limit, plus the
same margin; so an agentic job's ``timeout-minutes`` follows its duration and its points
(InferenceX fixes 500 minutes for every single-node agentic job, 780 for multi-node ones).
"""

from __future__ import annotations

import math

from infersweep.rowjobs.local import time_limit_seconds

FALLBACK_TIME_LIMIT_S = 3600
DEFAULT_MARGIN_S = 3600  # a fleet's deadline-margin-s when it sets none
# checkout, pip install, a cold srt-slurm cache entry, cancelling and collecting, uploads
JOB_ALLOWANCE_S = 1800
# agentic: the engine's start (image pull, model load; InferenceX saw 4-14 min of dataset
# configuration on top), once per job, not scaled down
AGENTIC_START_S = 1800
# agentic, per concurrency, not scaled down: the client's start and dataset configuration,
# the drain of requests still in flight when the window closes, the result's processing
AGENTIC_POINT_OVERHEAD_S = 900


def agentic_budget_s(workload, scale_down: float = 1.0) -> float:
    """How long an agentic job's replays take at most: the engine's start, then for each
    concurrency the fixed overhead, the warm-up grace and the measured window, the two
    windows as :func:`infersweep.agentic.replay.scaled_settings` shrinks them."""
    from infersweep.agentic.replay import scaled_settings
    from infersweep.agentic.replaycmd import WARMUP_GRACE_PERIOD_S

    duration = int(workload.duration)
    scaled = scaled_settings(scale_down, duration)
    window, grace = ((scaled.duration[1], scaled.warmup_grace[1]) if scaled
                     else (duration, WARMUP_GRACE_PERIOD_S))
    points = max(1, len(workload.concs))
    return float(AGENTIC_START_S + points * (AGENTIC_POINT_OVERHEAD_S + grace + window))


def _is_agentic(workload) -> bool:
    return bool(getattr(workload, "agentic", False))


def launch_deadline_s(recipe: dict, fleet=None, workload=None,
                      scale_down: float | None = None) -> float:
    """The recipe's Slurm time limit (else the fleet's default) plus the fleet's margin
    (a fleet not known here: the defaults). An agentic ``workload`` waits no longer than
    its :func:`agentic_budget_s` at ``scale_down`` (the launch's; else the fleet's)."""
    limit = time_limit_seconds((recipe.get("slurm") or {}).get("time_limit"))
    if limit is None and fleet is not None:
        limit = time_limit_seconds(fleet.srtslurm.get("default_time_limit"))
    limit = limit or FALLBACK_TIME_LIMIT_S
    if _is_agentic(workload):
        if scale_down is None:
            scale_down = 1.0 if fleet is None else fleet.scale_down
        limit = min(limit, agentic_budget_s(workload, scale_down))
    margin = DEFAULT_MARGIN_S if fleet is None else fleet.deadline_margin_s
    return float(limit + margin)


def job_timeout_minutes(recipe: dict, fleets=(), workload=None) -> int:
    """``timeout-minutes`` for the job that launches ``recipe`` (with ``workload``, the
    rendered row's) on any of ``fleets``, each at its own scale-down."""
    deadline = max(launch_deadline_s(recipe, f, workload) for f in (list(fleets) or [None]))
    return math.ceil((deadline + JOB_ALLOWANCE_S) / 60)
