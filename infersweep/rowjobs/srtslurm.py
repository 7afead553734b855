"""The srt-slurm executor: a rendered recipe submitted with ``srtctl apply --json`` at the
pinned commit, watched with the batched Slurm watcher, collected into a result manifest.

Everything a job writes stays in its scratch folder (the fleet's ``scratch``, on a file system
the nodes share, never the runner's checkout). :meth:`SrtSlurmJob.collect` copies the result
files and the job's main logs into the job's ``workdir`` with the launcher's own user and
writes nothing else there. Cancelling is ``scancel <job id>`` and nothing broader.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import yaml

from infersweep.atomic import write_atomic
from infersweep.rowjobs import manifest as manifests
from infersweep.rowjobs.apply import Submission, SubmitError, apply
from infersweep.rowjobs.checkout import Checkout
from infersweep.rowjobs.executor import (
    Executor,
    Job,
    JobState,
    Provenance,
    RenderOptions,
    normalise_state,
)
from infersweep.rowjobs.fleet import Fleet
from infersweep.rowjobs.jobtag import JobTag
from infersweep.rowjobs.recipes import check_fits, tag_recipe
from infersweep.rowjobs.slurm import SlurmError, SlurmWatcher, run_command, tagged_jobs
from infersweep.rowjobs.slurm_state import JobStatus

RESULT_DIR = "/logs/fixed-seq"  # inside the job; srtctl keeps /logs as <output_dir>/logs
RESULT_SUBDIR = Path("logs", "fixed-seq")
EVAL_SUBDIR = "eval"
CANCEL_GRACE_S = 120.0  # how long a cancelled job may take to stop and write what it has
KEPT_LOGS = ("benchmark.out",)


def scratch_root(fleet: Fleet, environ: dict[str, str] | None = None) -> Path:
    environ = os.environ if environ is None else environ
    if fleet.scratch:
        return Path(fleet.scratch)
    if environ.get("RUNNER_TEMP"):
        return Path(environ["RUNNER_TEMP"]) / "infersweep"
    return Path(tempfile.gettempdir()) / "infersweep"


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "job"


class SrtSlurmJob(Job):
    def __init__(self, submission: Submission, workdir: Path, rendered, provenance: Provenance,
                 watcher: SlurmWatcher, say: Callable[[str], None]):
        self.submission = submission
        self.job_id = submission.job_id
        self.workdir = workdir
        self.rendered = rendered
        self.provenance = provenance
        self.watcher = watcher
        self.say = say
        self.cancel_reason: str | None = None
        self.watcher.watch(self.job_id)
        self._interval = watcher.interval
        self._next_poll = 0.0

    @property
    def status(self) -> JobStatus:
        return self.watcher.status(self.job_id)

    def _state(self) -> JobState:
        return normalise_state(str(self.status.state))

    def state(self) -> JobState:
        if not self.status.terminal:
            self.watcher.poll()
        return self._state()

    def wait(self, deadline: float | None = None, **_kw) -> JobState:
        """Until the job ends or ``deadline`` (monotonic) passes. However often it is called,
        Slurm is asked at most once per poll interval (the watcher's, with its backoff), and
        each ask is one batched query."""
        w = self.watcher
        while True:
            now = time.monotonic()
            if now >= self._next_poll:
                before, failures = self.status, w.failed_queries
                w.poll()
                s = self.status
                if s != before and s.state.value != "UNKNOWN":
                    self.say(f"job {self.job_id}: {s.state}"
                             + (f" ({s.reason})" if s.reason and s.reason != "None" else ""))
                    self._interval = w.interval
                elif w.failed_queries > failures:
                    self._interval = min(self._interval * w.backoff, w.max_interval)
                else:
                    self._interval = min(self._interval * 1.25, w.max_interval)
                self._next_poll = now + self._interval
            if self.status.terminal:
                return self._state()
            if deadline is not None and time.monotonic() >= deadline:
                return self._state()
            wake = self._next_poll if deadline is None else min(self._next_poll, deadline)
            time.sleep(max(0.01, wake - time.monotonic()))

    def cancel(self, reason: str = "cancelled") -> None:
        """``scancel <id>``; then wait a while for the job to stop so what it wrote is there."""
        if self.status.terminal:
            return
        if self.cancel_reason is None:
            self.cancel_reason = reason
        self.say(f"job {self.job_id}: scancel {self.job_id} ({reason})")
        try:
            self.watcher.cancel(self.job_id)
        except SlurmError as exc:
            self.say(f"job {self.job_id}: {exc}")
        end = time.monotonic() + CANCEL_GRACE_S
        while not self.status.terminal and time.monotonic() < end:
            self.watcher.poll()
            if not self.status.terminal:
                time.sleep(1.0)
        # accounting says CANCELLED before the job's processes are gone (COMPLETING): wait
        # until squeue no longer lists it, so its cleanup has written what it had
        while time.monotonic() < end and self.queued():
            time.sleep(1.0)

    def queued(self) -> bool:
        """squeue still lists this job (pending, running or completing)."""
        r = run_command(["squeue", "--noheader", "-j", self.job_id, "-o", "%i"], 30)
        return r.returncode == 0 and self.job_id in r.stdout.split()

    def reason(self) -> str | None:
        s = self.status
        if self.cancel_reason:
            return self.cancel_reason
        if s.state.value == "COMPLETED" and s.exit_code in ("", "0:0"):
            return None
        parts = []
        if s.exit_code and s.exit_code != "0:0":
            parts.append(f"exit code {s.exit_code}")
        if s.reason and s.reason not in ("None", ""):
            parts.append(s.reason)
        log = self.submission.output_dir / "logs" / f"sweep_{self.job_id}.log"
        parts.append(f"see {log}")
        return "; ".join(parts)

    def collect(self) -> dict:
        """Copy result files and the main logs in, then the manifest of what is there."""
        src_logs = self.submission.output_dir / "logs"
        dst = self.workdir / RESULT_SUBDIR
        dst.mkdir(parents=True, exist_ok=True)
        src = src_logs / "fixed-seq"
        if src.is_dir():
            for f in sorted(src.iterdir()):
                if f.is_file():
                    shutil.copyfile(f, dst / f.name)
                # folders: the eval step's output (rows marked run-eval) and each agentic
                # point's client exports, which its result names and the gates read
                elif f.is_dir() and not f.is_symlink():
                    shutil.copytree(f, dst / f.name, dirs_exist_ok=True, symlinks=True)
        for name in (f"sweep_{self.job_id}.log", *KEPT_LOGS):
            if (src_logs / name).is_file():
                shutil.copyfile(src_logs / name, self.workdir / "logs" / name)
        state = self._state()
        if not state.terminal and self.status.state.value == "UNKNOWN":
            state = JobState.UNKNOWN
        r = self.rendered
        return manifests.collect(
            recipe=r.recipe, points=r.points, isl=r.workload.isl, osl=r.workload.osl,
            result_dir=dst, manifest_dir=self.workdir, provenance=self.provenance,
            executor=SrtSlurmExecutor.name, job_id=self.job_id, job_state=state,
            job_reason=self.reason(), scale_down=getattr(r.workload, "scale_down", 1.0))


class SrtSlurmExecutor(Executor):
    """Submits through the srtctl of a ready cache entry (:mod:`infersweep.rowjobs.checkout`)."""

    name = "srt-slurm"

    def __init__(self, fleet: Fleet, checkout: Checkout | None, repo: Path, tag: JobTag, *,
                 watcher: SlurmWatcher | None = None, scratch: Path | None = None,
                 environ: dict[str, str] | None = None, say: Callable[[str], None] = print):
        self.fleet = fleet
        self.checkout = checkout
        self.repo = Path(repo)
        self.tag = tag
        self.watcher = watcher or SlurmWatcher()
        self.scratch = scratch or scratch_root(fleet, environ)
        self.environ = os.environ if environ is None else environ
        self.say = say
        self.submitted: list[str] = []  # every job id this executor submitted

    def render_options(self, workdir: Path) -> RenderOptions:
        return RenderOptions(client=self.fleet.client_command(self.repo, self.scratch),
                             result_dir=RESULT_DIR)

    def cancel_orphans(self) -> list[str]:
        """Cancel, one id at a time, every queued job carrying this launch's tag."""
        try:
            found = tagged_jobs(self.tag)
        except SlurmError as exc:
            self.say(f"cannot look for jobs tagged {self.tag.comment}: {exc}")
            return []
        for job_id in found:
            self.say(f"job {job_id} carries this launch's tag: scancel {job_id}")
            try:
                self.watcher.cancel(job_id)
            except SlurmError as exc:
                self.say(str(exc))
        return found

    def job_env(self, config: Path) -> dict[str, str]:
        env = self.fleet.job_env(self.repo, self.environ)
        env["SRTSLURM_CONFIG"] = str(config)
        env["RUNNER_NAME"] = self.tag.name  # srtctl's job name
        return env

    def prepare(self, rendered, workdir: Path) -> tuple[Path, Path, dict[str, str]]:
        """The job's scratch folder with recipe.yaml and srtslurm.yaml; its environment."""
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
        job_dir = self.scratch / f"{self.tag.name}-{_slug(rendered.name)}-{stamp}-{os.getpid()}"
        (job_dir / "outputs").mkdir(parents=True, exist_ok=True)
        profile = {**self.fleet.srtslurm, "srtctl_root": str(self.checkout.src),
                   "output_dir": str(job_dir / "outputs")}
        config = job_dir / "srtslurm.yaml"
        write_atomic(config, yaml.safe_dump(profile, sort_keys=False))
        recipe = job_dir / "recipe.yaml"
        write_atomic(recipe, rendered.text())
        return job_dir, recipe, self.job_env(config)

    def submit(self, rendered, row: dict, workdir: Path, *, provenance: Provenance) -> SrtSlurmJob:
        if self.checkout is None:
            raise RuntimeError("the srt-slurm checkout is not ready (call checkout.ensure first)")
        workdir = Path(workdir)
        check_fits(rendered, row, self.fleet, provenance.config_key)
        rendered = tag_recipe(rendered, self.tag)
        (workdir / "logs").mkdir(parents=True, exist_ok=True)
        write_atomic(workdir / "recipe.yaml", rendered.text())
        write_atomic(workdir / "row.json", json.dumps(row, indent=2) + "\n")
        job_dir, recipe, env = self.prepare(rendered, workdir)
        self.say(f"srtctl apply -f {recipe} (srt-slurm {self.checkout.commit[:12]}, "
                 f"job name {self.tag.name})")
        try:
            sub = apply(self.checkout.srtctl, recipe, job_dir / "outputs", env=env, cwd=job_dir)
        except SubmitError as exc:
            for job_id in exc.submitted:  # ours, by id: never leave one behind
                self.submitted.append(job_id)
                try:
                    self.watcher.cancel(job_id)
                except SlurmError as err:
                    self.say(str(err))
            raise
        except BaseException:
            # stopped while srtctl ran (a signal): it may have submitted before it was killed;
            # find the job by this launch's tag and cancel it by id
            self.cancel_orphans()
            raise
        self.submitted.append(sub.job_id)
        self.say(f"submitted job {sub.job_id}: {sub.output_dir}")
        return SrtSlurmJob(sub, workdir, rendered, provenance, self.watcher, self.say)
