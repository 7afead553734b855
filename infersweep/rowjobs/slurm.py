"""Watch Slurm jobs: one batched query per poll for every job watched, a deadline, backoff.

Modelled on submitit's Slurm watcher: jobs are registered with the watcher, and one ``sacct``
call reads the state of all of them (``scontrol show job`` where the cluster has no accounting
database). A query that fails (slurmdbd restarting, a timeout, a job not yet recorded) makes the
affected jobs UNKNOWN for that poll and is retried with backoff: it never means "the job is gone".
A job that reached a terminal state is not queried again.

Cancelling is exactly by job id (``scancel <id>``): never by name, user or pattern.
"""

from __future__ import annotations

import re
import subprocess
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from infersweep.rowjobs.jobtag import JobTag
from infersweep.rowjobs.slurm_state import (
    ACCOUNTING_DISABLED,
    INVALID_JOB_ID,
    SACCT_FIELDS,
    JobStatus,
    State,
    parse_sacct,
    parse_scontrol,
)


@dataclass(frozen=True)
class CommandResult:
    returncode: int
    stdout: str
    stderr: str


Runner = Callable[[Sequence[str], float], CommandResult]


class SlurmError(Exception):
    """A Slurm command failed in a way that retrying will not fix."""


class DeadlineExceeded(Exception):
    """The watcher's deadline passed with jobs still not finished (they are left running:
    the owner decides whether to cancel)."""

    def __init__(self, statuses: dict[str, JobStatus], timeout: float):
        self.statuses = statuses
        self.timeout = timeout
        pending = ", ".join(f"{j} {s.state}" for j, s in statuses.items() if not s.terminal)
        super().__init__(f"deadline of {timeout:g} s passed; not finished: {pending}")


def run_command(argv: Sequence[str], timeout: float) -> CommandResult:
    """Run a Slurm client; a hang or a missing binary is a result, not an exception."""
    try:
        p = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return CommandResult(124, "", f"{argv[0]}: no answer within {timeout:g} s")
    except FileNotFoundError:
        return CommandResult(127, "", f"{argv[0]}: command not found")
    return CommandResult(p.returncode, p.stdout, p.stderr)


_JOB_ID = re.compile(r"^\d+(_\d+)?$")


def check_job_id(job_id: str) -> str:
    job_id = str(job_id).strip()
    if not _JOB_ID.match(job_id):
        raise ValueError(f"not a Slurm job id: {job_id!r} (expected digits, e.g. '4711')")
    return job_id


class SlurmWatcher:
    """Track many jobs with one query per :meth:`poll`.

    ``accounting``: ``"auto"`` (sacct, switching to scontrol for good when sacct says
    accounting is disabled), ``"sacct"`` or ``"scontrol"``.
    """

    def __init__(self, *, accounting: str = "auto", run: Runner = run_command,
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep,
                 interval: float = 2.0, max_interval: float = 30.0, backoff: float = 2.0,
                 query_timeout: float = 30.0):
        if accounting not in ("auto", "sacct", "scontrol"):
            raise ValueError(f"accounting must be auto, sacct or scontrol, not {accounting!r}")
        if not 0 < interval <= max_interval:
            raise ValueError("need 0 < interval <= max_interval")
        if backoff < 1:
            raise ValueError("backoff must be at least 1")
        self.accounting = accounting
        self.backend = "scontrol" if accounting == "scontrol" else "sacct"
        self._run = run
        self._clock = clock
        self._sleep = sleep
        self.interval = interval
        self.max_interval = max_interval
        self.backoff = backoff
        self.query_timeout = query_timeout
        self._jobs: dict[str, JobStatus] = {}
        self.queries = 0  # Slurm queries made, for callers and tests that count them
        self.failed_queries = 0  # of which transient failures
        self.commands: list[list[str]] = []  # every Slurm command run, in order

    # -- registration -------------------------------------------------------------------------
    def watch(self, job_id: str) -> None:
        job_id = check_job_id(job_id)
        self._jobs.setdefault(job_id, JobStatus.unknown(job_id, "not queried yet"))

    def forget(self, job_id: str) -> None:
        self._jobs.pop(str(job_id), None)

    def statuses(self) -> dict[str, JobStatus]:
        return dict(self._jobs)

    def status(self, job_id: str) -> JobStatus:
        return self._jobs[str(job_id)]

    # -- one poll -----------------------------------------------------------------------------
    def poll(self) -> dict[str, JobStatus]:
        """One query for every watched job that is not finished; returns all statuses."""
        active = [j for j, s in self._jobs.items() if not s.terminal]
        if not active:
            return self.statuses()
        found, error = self._query(active)
        for job_id in active:
            if error is not None:
                self._jobs[job_id] = JobStatus.unknown(job_id, error)
            elif job_id in found:
                self._jobs[job_id] = found[job_id]
            else:
                self._jobs[job_id] = JobStatus.unknown(
                    job_id, f"{self.backend} does not list the job (yet); asking again")
        return self.statuses()

    def _call(self, argv: list[str]) -> CommandResult:
        self.queries += 1
        self.commands.append(argv)
        return self._run(argv, self.query_timeout)

    def _query(self, job_ids: list[str]) -> tuple[dict[str, JobStatus], str | None]:
        if self.backend == "sacct":
            r = self._call(["sacct", "-X", "--noheader", "--parsable2", "-o", SACCT_FIELDS,
                            "-j", ",".join(job_ids)])
            text = r.stdout + r.stderr
            if ACCOUNTING_DISABLED in text or (r.returncode == 127 and self.accounting == "auto"):
                if self.accounting == "sacct":
                    raise SlurmError("sacct: Slurm accounting storage is disabled on this "
                                     "cluster (use accounting='auto' or 'scontrol')")
                self.backend = "scontrol"
                return self._query(job_ids)
            if r.returncode != 0:
                self.failed_queries += 1
                return {}, f"sacct failed (exit {r.returncode}): {r.stderr.strip()[:300]}"
            return parse_sacct(r.stdout), None
        # scontrol: one job by id, or every job in one call when several are watched
        argv = ["scontrol", "-o", "show", "job"] + (job_ids if len(job_ids) == 1 else [])
        r = self._call(argv)
        if r.returncode == 127:
            raise SlurmError("neither sacct with accounting nor scontrol is available")
        if r.returncode != 0 and INVALID_JOB_ID in r.stderr:
            # slurmctld forgets finished jobs after MinJobAge: the state is unknowable here,
            # which is not the same as the job having vanished.
            return {}, None
        if r.returncode != 0:
            self.failed_queries += 1
            return {}, f"scontrol failed (exit {r.returncode}): {r.stderr.strip()[:300]}"
        return parse_scontrol(r.stdout), None

    # -- waiting ------------------------------------------------------------------------------
    def wait(self, job_ids: Iterable[str] | None = None, *, timeout: float,
             on_change: Callable[[JobStatus], None] | None = None) -> dict[str, JobStatus]:
        """Poll until every job in ``job_ids`` (default: all watched) is terminal.

        Raises :class:`DeadlineExceeded` after ``timeout`` seconds. The poll interval starts
        at ``interval``, grows by ``backoff`` after a failed query and slowly while nothing
        changes, never beyond ``max_interval`` or the deadline, and drops back on a change.
        """
        wanted = [check_job_id(j) for j in job_ids] if job_ids is not None else list(self._jobs)
        for j in wanted:
            self.watch(j)
        end = self._clock() + timeout
        interval = self.interval
        while True:
            before = {j: self._jobs[j] for j in wanted}
            failures = self.failed_queries
            now_all = self.poll()
            now = {j: now_all[j] for j in wanted}
            changed = [s for j, s in now.items() if s != before[j]]
            if on_change is not None:
                for s in changed:
                    on_change(s)
            if all(s.terminal for s in now.values()):
                return now
            remaining = end - self._clock()
            if remaining <= 0:
                raise DeadlineExceeded(now, timeout)
            if self.failed_queries > failures:
                interval = min(interval * self.backoff, self.max_interval)
            elif changed and any(s.state is not State.UNKNOWN for s in changed):
                interval = self.interval
            else:
                interval = min(interval * 1.25, self.max_interval)
            self._sleep(min(interval, remaining))

    # -- cancelling ---------------------------------------------------------------------------
    def cancel(self, job_id: str) -> None:
        """``scancel <id>``, exactly that job. A job that already finished is not an error."""
        job_id = check_job_id(job_id)
        argv = ["scancel", job_id]
        self.commands.append(argv)
        r = self._run(argv, self.query_timeout)
        if r.returncode != 0 and "already completing or completed" not in r.stderr:
            raise SlurmError(f"scancel {job_id} failed (exit {r.returncode}): {r.stderr.strip()}")


def tagged_jobs(tag: JobTag, run: Runner = run_command, timeout: float = 30.0) -> list[str]:
    """Ids of queued or running jobs whose comment carries ``tag`` (for finding an orphan;
    cancel what it returns one id at a time)."""
    r = run(["squeue", "--noheader", "-o", "%i|%k"], timeout)
    if r.returncode != 0:
        raise SlurmError(f"squeue failed (exit {r.returncode}): {r.stderr.strip()}")
    ids = []
    for line in r.stdout.splitlines():
        job_id, _, comment = line.strip().partition("|")
        if JobTag.from_comment(comment) == tag:
            ids.append(job_id)
    return ids
