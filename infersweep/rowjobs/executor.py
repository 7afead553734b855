"""One interface for every executor: submit a rendered recipe, follow the job, collect it.

The shape follows submitit's ``Executor``/``Job``: an executor turns a rendered recipe into a
running job and hands back a handle; the handle reports a normalised state, can be cancelled,
waited for with a deadline, and collected into a result manifest. The local executor (the
simulator on this machine) and the srt-slurm executor (``srtctl apply`` on a Slurm cluster)
both implement it, so ``infersweep sweep run`` never knows which one it drives.
"""

from __future__ import annotations

import abc
import time
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from infersweep.recipe import workload


class JobState(StrEnum):
    """Job states in Slurm's vocabulary, whatever runs the job."""

    PENDING = "PENDING"
    RUNNING = "RUNNING"
    COMPLETED = "COMPLETED"
    FAILED = "FAILED"
    CANCELLED = "CANCELLED"
    TIMEOUT = "TIMEOUT"
    NODE_FAIL = "NODE_FAIL"
    OUT_OF_MEMORY = "OUT_OF_MEMORY"
    PREEMPTED = "PREEMPTED"
    UNKNOWN = "UNKNOWN"  # not known right now (a failed query); never means "gone"

    @property
    def terminal(self) -> bool:
        return self in TERMINAL

    def __str__(self) -> str:
        return self.value


TERMINAL = frozenset({JobState.COMPLETED, JobState.FAILED, JobState.CANCELLED,
                      JobState.TIMEOUT, JobState.NODE_FAIL, JobState.OUT_OF_MEMORY,
                      JobState.PREEMPTED})

# Slurm spellings (sacct/squeue/scontrol) that map onto a coarser state.
_ALIASES = {
    "CONFIGURING": JobState.PENDING, "REQUEUED": JobState.PENDING,
    "REQUEUE_HOLD": JobState.PENDING, "REQUEUE_FED": JobState.PENDING,
    "RESV_DEL_HOLD": JobState.PENDING, "COMPLETING": JobState.RUNNING,
    "SUSPENDED": JobState.RUNNING, "STOPPED": JobState.RUNNING, "SIGNALING": JobState.RUNNING,
    "STAGE_OUT": JobState.RUNNING, "RESIZING": JobState.RUNNING,
    "BOOT_FAIL": JobState.NODE_FAIL, "DEADLINE": JobState.TIMEOUT,
    "REVOKED": JobState.CANCELLED, "SPECIAL_EXIT": JobState.FAILED,
}
_SHORT = {"PD": "PENDING", "R": "RUNNING", "CG": "COMPLETING", "CD": "COMPLETED",
          "F": "FAILED", "CA": "CANCELLED", "TO": "TIMEOUT", "NF": "NODE_FAIL",
          "OOM": "OUT_OF_MEMORY", "PR": "PREEMPTED", "CF": "CONFIGURING", "S": "SUSPENDED",
          "BF": "BOOT_FAIL", "DL": "DEADLINE", "RQ": "REQUEUED"}


def normalise_state(text: str | None) -> JobState:
    """``"CANCELLED by 0"``, ``"CD"``, ``"completing"``, ``"OUT_OF_ME+"`` -> a JobState."""
    if not text:
        return JobState.UNKNOWN
    word = text.strip().split()[0].upper().rstrip("+")
    word = _SHORT.get(word, word)
    if word in JobState.__members__:
        return JobState[word]
    if word in _ALIASES:
        return _ALIASES[word]
    if word.startswith("OUT_OF_ME"):  # sacct truncates to 10 characters
        return JobState.OUT_OF_MEMORY
    return JobState.UNKNOWN


@dataclass(frozen=True)
class RenderOptions:
    """How the recipe's benchmark step starts our client and where it writes results, as seen
    from where the step runs (inside the job's container on Slurm; this machine locally)."""

    client: str = workload.DEFAULT_CLIENT
    result_dir: str = workload.DEFAULT_RESULT_DIR


@dataclass(frozen=True)
class Provenance:
    """What a manifest says about where its results come from (the job fills in the rest)."""

    config_key: str
    image: str | None
    srt_slurm_commit: str | None
    atom_revision: str | None
    run_id: str
    attempt: int


class Job(abc.ABC):
    """A handle on one submitted recipe."""

    job_id: str
    workdir: Path

    @abc.abstractmethod
    def state(self) -> JobState:
        """The job's state now (one query; UNKNOWN when the query failed)."""

    @abc.abstractmethod
    def cancel(self, reason: str = "cancelled") -> None:
        """Stop exactly this job; safe to call twice or after it finished."""

    @abc.abstractmethod
    def collect(self) -> dict:
        """The result manifest of what exists now (see :mod:`infersweep.rowjobs.manifest`)."""

    def wait(self, deadline: float | None = None, *, poll: float = 0.5,
             max_poll: float = 10.0) -> JobState:
        """Block until the job is terminal or ``time.monotonic()`` passes ``deadline``; the
        state at that moment. Polls with backoff; an UNKNOWN answer is retried."""
        interval = poll
        while True:
            state = self.state()
            if state.terminal:
                return state
            now = time.monotonic()
            if deadline is not None and now >= deadline:
                return state
            pause = interval if deadline is None else min(interval, deadline - now)
            time.sleep(max(pause, 0.01))
            interval = min(interval * 1.5, max_poll)


class Executor(abc.ABC):
    """Runs rendered recipes as jobs."""

    name: str

    def render_options(self, workdir: Path) -> RenderOptions:
        """The client and result directory the recipe's benchmark step should use."""
        return RenderOptions()

    @abc.abstractmethod
    def submit(self, rendered, row: dict, workdir: Path, *, provenance: Provenance) -> Job:
        """Start ``rendered`` (a :class:`~infersweep.recipe.render.Rendered` for ``row``);
        ``workdir`` is this job's own folder, where its manifest is written."""
