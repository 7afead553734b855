"""The local executor: the same rendered recipe on this machine, the simulator as its engines.

For each worker of the recipe's topology (``resources``) it starts ``infersweep sim serve``
with that role's engine limits and data-parallel ranks (:mod:`infersweep.rowjobs.engineplan`),
then ``infersweep sim router`` in front of a disaggregated topology or of several aggregated
workers, and runs the recipe's benchmark command with ``SRT_FRONTEND_HOST``/``PORT`` set as
srt-slurm sets them inside a job. The benchmark step writes the same ``<name>-c<conc>.json``
files as on a cluster. The job is a process of its own (:mod:`infersweep.rowjobs.localrun`) in
a session of its own, so cancelling it signals exactly its process group.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

from infersweep import lifeline
from infersweep.atomic import write_atomic
from infersweep.bench.seeds import RUN_ID_ENV, run_tag
from infersweep.rowjobs import manifest as manifests
from infersweep.rowjobs.engineplan import engine_plan
from infersweep.rowjobs.executor import Executor, Job, JobState, Provenance, RenderOptions
from infersweep.rowjobs.localagentic import AgenticLocal
from infersweep.rowjobs.localeval import PROVENANCE_FILE, EvalSim, provenance_doc
from infersweep.rowjobs.localrun import STATUS_FILE

RESULT_SUBDIR = Path("logs", "fixed-seq")  # where srt-slurm keeps the step's /logs/fixed-seq
SPEC_FILE = "local-job.json"
CANCEL_FILE = "cancel-reason"
READY_TIMEOUT_S = 120.0
SIM_ARGS_ENV = "INFERSWEEP_SIM_ARGS"  # more `sim serve` flags for every simulated worker
# explicit environment for the job: these and nothing else come from the caller's
# (PYTHONPATH too: the local job runs the same infersweep as the caller, from the same place)
PASSED_ENV = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "TZ", "PYTHONPATH")


def time_limit_seconds(value) -> float | None:
    """Slurm's ``time_limit`` forms: M, M:S, H:M:S, D-H, D-H:M, D-H:M:S."""
    if value is None:
        return None
    text = str(value).strip()
    m = re.fullmatch(r"(?:(\d+)-)?(\d+)(?::(\d+))?(?::(\d+))?", text)
    if not m:
        return None
    days, a, b, c = m.groups()
    nums = [int(x) for x in (a, b, c) if x is not None]
    if days is not None:
        h, mi, s = (nums + [0, 0])[:3]
    elif len(nums) == 3:
        h, mi, s = nums
    else:
        h, mi, s = 0, nums[0], nums[1] if len(nums) > 1 else 0
    return ((int(days or 0) * 24 + h) * 60 + mi) * 60 + s


def _env(recipe: dict, *sections: dict | None) -> dict[str, str]:
    env = {k: os.environ[k] for k in PASSED_ENV if k in os.environ}
    env.update({str(k): str(v) for k, v in (recipe.get("environment") or {}).items()})
    for extra in sections:
        env.update({str(k): str(v) for k, v in (extra or {}).items()})
    return env


class LocalJob(Job):
    def __init__(self, proc: subprocess.Popen, workdir: Path, rendered, provenance: Provenance,
                 result_dir: Path):
        self.proc = proc
        self.workdir = workdir
        self.job_id = f"local-{proc.pid}"
        self.rendered = rendered
        self.provenance = provenance
        self.result_dir = result_dir

    def _status(self) -> dict:
        try:
            return json.loads((self.workdir / STATUS_FILE).read_text())
        except (OSError, ValueError):
            return {}

    def state(self) -> JobState:
        state = JobState(self._status().get("state", "PENDING"))
        if state.terminal:
            return state
        if self.proc.poll() is None:
            return state
        if (self.workdir / CANCEL_FILE).exists():
            return JobState.CANCELLED
        return JobState.FAILED  # the job process died without a final word

    def reason(self) -> str | None:
        cancel = self.workdir / CANCEL_FILE
        if cancel.exists():
            return cancel.read_text().strip() or None
        status = self._status()
        if status.get("reason"):
            return status["reason"]
        if self.proc.poll() is not None and not JobState(status.get("state", "PENDING")).terminal:
            return f"the job process exited {self.proc.returncode} without a final state"
        return None

    def _signal_group(self, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, sig)  # the job's own session: its process group id

    def cancel(self, reason: str = "cancelled") -> None:
        if self.state().terminal and self.proc.poll() is not None:
            self._signal_group(signal.SIGKILL)  # stragglers of a finished job, if any
            return
        if not (self.workdir / CANCEL_FILE).exists():
            write_atomic(self.workdir / CANCEL_FILE, reason + "\n")
        self._signal_group(signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=15)
        self._signal_group(signal.SIGKILL)
        self.proc.wait()

    def wait(self, deadline: float | None = None, **kw) -> JobState:
        state = super().wait(deadline, **kw)
        if state.terminal:
            self.proc.wait()
            self._signal_group(signal.SIGKILL)
        return state

    def collect(self) -> dict:
        r = self.rendered
        return manifests.collect(
            recipe=r.recipe, points=r.points, isl=r.workload.isl, osl=r.workload.osl,
            result_dir=self.result_dir, manifest_dir=self.workdir, provenance=self.provenance,
            executor=LocalExecutor.name, job_id=self.job_id, job_state=self.state(),
            job_reason=self.reason(), scale_down=getattr(r.workload, "scale_down", 1.0))


class LocalExecutor(Executor):
    """Runs every job on this machine, one simulated engine process per recipe worker."""

    name = "local"

    def __init__(self, *, ready_timeout: float = READY_TIMEOUT_S,
                 time_limit: float | None = None, evals: EvalSim | None = None,
                 agentic: AgenticLocal | None = None):
        self.ready_timeout = ready_timeout
        self.time_limit = time_limit  # None: the recipe's slurm.time_limit
        self.evals = evals if evals is not None else EvalSim()  # for rows marked run-eval
        self.agentic = agentic  # traces, tokenizer and client for agentic rows

    def render_options(self, workdir: Path) -> RenderOptions:
        client = f"{shlex.quote(sys.executable)} -m infersweep"
        return RenderOptions(client=client, result_dir=str((workdir / RESULT_SUBDIR).resolve()))

    def submit(self, rendered, row: dict, workdir: Path, *, provenance: Provenance) -> LocalJob:
        workdir = Path(workdir).resolve()  # the job runs with its folder as working directory
        workdir.mkdir(parents=True, exist_ok=True)
        recipe = rendered.recipe
        agentic = getattr(rendered.workload, "agentic", False)
        workers, router = engine_plan(recipe, row["model"], agentic=agentic,
                                      total_cpu_dram_gb=float(row.get("total-cpu-dram-gb") or 0))
        backend = recipe.get("backend") or {}
        bench = recipe.get("benchmark") or {}
        limit = self.time_limit
        if limit is None:
            limit = time_limit_seconds((recipe.get("slurm") or {}).get("time_limit"))
        spec = {
            "workers": workers, "router": router,
            "command": bench["command"],
            "engine_env": _env(recipe, backend.get("prefill_environment"),
                               backend.get("decode_environment"),
                               backend.get("aggregated_environment")),
            "bench_env": {**_env(recipe, bench.get("env")),
                          RUN_ID_ENV: run_tag(provenance.run_id, provenance.attempt)},
            "time_limit_s": limit, "ready_timeout_s": self.ready_timeout,
        }
        extra = shlex.split(os.environ.get(SIM_ARGS_ENV, ""))
        for w in workers:  # fault injection, e.g. "--fail-rate 1" (docs/replay.md)
            w["args"] += extra
        result_dir = workdir / RESULT_SUBDIR
        if agentic:  # the replay's traces, tokenizer and client, through its environment
            local = self.agentic or AgenticLocal(workdir / "_agentic")
            spec["bench_env"].update(local.env())
        evals = rendered.workload.eval_conc is not None
        if evals:  # the recipe's eval step runs against the simulator's answer mode
            test_file, train_file = self.evals.files(workdir)
            for w in workers:
                w["args"] += self.evals.engine_args(test_file)
            spec["bench_env"]["INFERSWEEP_EVAL_ARGS"] = self.evals.args(workdir, test_file,
                                                                        train_file)
        write_atomic(workdir / "recipe.yaml", rendered.text())
        write_atomic(workdir / "row.json", json.dumps(row, indent=2) + "\n")
        write_atomic(workdir / SPEC_FILE, json.dumps(spec, indent=2) + "\n")
        write_atomic(workdir / STATUS_FILE, json.dumps({"state": "PENDING",
                                                        "updated": time.time()}) + "\n")
        (workdir / CANCEL_FILE).unlink(missing_ok=True)
        result_dir.mkdir(parents=True, exist_ok=True)
        with open(workdir / "job.log", "ab") as log:
            # its own session (cancel signals the whole group); it dies with this process
            proc = lifeline.spawn(
                [sys.executable, "-m", "infersweep.rowjobs.localrun", str(workdir / SPEC_FILE)],
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                env=_env({}), cwd=workdir, start_new_session=True)
        job = LocalJob(proc, workdir, rendered, provenance, result_dir)
        if evals:  # read by the eval step, after the throughput points
            write_atomic(workdir / PROVENANCE_FILE,
                         json.dumps(provenance_doc(provenance, job.job_id), indent=2) + "\n")
        return job
