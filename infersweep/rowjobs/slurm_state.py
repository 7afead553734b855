"""Slurm job states: one normalised vocabulary, and parsers for `sacct` and `scontrol` output.

`sacct` prints states such as ``CANCELLED by 0`` or ``OUT_OF_MEMORY``; `scontrol` prints
``JobState=CANCELLED``; both have transient states (``COMPLETING``, ``CONFIGURING``) that a
launcher only needs as "pending" or "running". Everything is reduced to :class:`State`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum


class State(StrEnum):
    PENDING = "PENDING"
    RUNNING = "RUNNING"
    COMPLETED = "COMPLETED"
    FAILED = "FAILED"
    TIMEOUT = "TIMEOUT"
    NODE_FAIL = "NODE_FAIL"
    CANCELLED = "CANCELLED"
    OUT_OF_MEMORY = "OUT_OF_MEMORY"
    PREEMPTED = "PREEMPTED"
    BOOT_FAIL = "BOOT_FAIL"
    DEADLINE = "DEADLINE"
    # Not a Slurm state: the query failed or did not mention the job. Never means "job gone".
    UNKNOWN = "UNKNOWN"

    @property
    def terminal(self) -> bool:
        return self not in (State.PENDING, State.RUNNING, State.UNKNOWN)


_ALIASES = {
    "CONFIGURING": State.PENDING,
    "REQUEUED": State.PENDING,
    "REQUEUE_FED": State.PENDING,
    "REQUEUE_HOLD": State.PENDING,
    "RESV_DEL_HOLD": State.PENDING,
    "COMPLETING": State.RUNNING,
    "SIGNALING": State.RUNNING,
    "STAGE_OUT": State.RUNNING,
    "RESIZING": State.RUNNING,
    "SUSPENDED": State.RUNNING,
    "STOPPED": State.RUNNING,
    "UPDATE_DB": State.RUNNING,
    "POWER_UP_NODE": State.PENDING,
    "SPECIAL_EXIT": State.FAILED,
    "REVOKED": State.CANCELLED,
}


def normalise(raw: str) -> State:
    """``"CANCELLED by 0"`` → CANCELLED, ``"COMPLETING"`` → RUNNING, anything unknown → UNKNOWN."""
    word = raw.strip().split(" ", 1)[0].rstrip("+").upper()
    if word in State.__members__:
        return State[word]
    return _ALIASES.get(word, State.UNKNOWN)


@dataclass(frozen=True)
class JobStatus:
    job_id: str
    state: State
    raw_state: str = ""
    exit_code: str = ""  # Slurm's "code:signal", e.g. "0:0", "1:0", "0:15"
    reason: str = ""

    @property
    def terminal(self) -> bool:
        return self.state.terminal

    @property
    def succeeded(self) -> bool:
        return self.state is State.COMPLETED and self.exit_code in ("", "0:0")

    @classmethod
    def unknown(cls, job_id: str, reason: str) -> JobStatus:
        return cls(job_id, State.UNKNOWN, reason=reason)


# sacct -X --noheader --parsable2 -o JobIDRaw,State,ExitCode,Reason
SACCT_FIELDS = "JobIDRaw,State,ExitCode,Reason"


def parse_sacct(text: str) -> dict[str, JobStatus]:
    """Parse ``--parsable2`` lines of :data:`SACCT_FIELDS`. A requeued job can appear more
    than once; the last line (Slurm lists the newest record last) wins."""
    out: dict[str, JobStatus] = {}
    for line in text.splitlines():
        parts = line.strip().split("|")
        if len(parts) < 3 or not parts[0]:
            continue
        job_id, raw, exit_code = parts[0], parts[1], parts[2]
        if "." in job_id:  # a step (batch, extern, 0, ...): -X should hide them; be safe
            continue
        reason = parts[3] if len(parts) > 3 and parts[3] != "None" else ""
        out[job_id] = JobStatus(job_id, normalise(raw), raw, exit_code, reason)
    return out


_KV = re.compile(r"(\w+)=(\S*)")


def parse_scontrol(text: str) -> dict[str, JobStatus]:
    """Parse ``scontrol -o show job [id]``: one line per job of ``Key=Value`` pairs."""
    out: dict[str, JobStatus] = {}
    for line in text.splitlines():
        fields = dict(_KV.findall(line))
        job_id = fields.get("JobId")
        raw = fields.get("JobState")
        if not job_id or raw is None:
            continue
        reason = fields.get("Reason", "")
        out[job_id] = JobStatus(job_id, normalise(raw), raw, fields.get("ExitCode", ""),
                                "" if reason == "None" else reason)
    return out


ACCOUNTING_DISABLED = "accounting storage is disabled"
INVALID_JOB_ID = "Invalid job id specified"
