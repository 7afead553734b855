"""The real srtctl on the real local Slurm: `srtctl apply -f recipe --json`, the JSON line,
the job watched to its end, the benchmark output found. The chain `infersweep launch` drives."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path

import pytest

from infersweep.rowjobs.jobtag import JobTag
from infersweep.rowjobs.slurm import SlurmWatcher
from infersweep.rowjobs.slurm_state import State
from tests.integration.slurm.conftest import wait_until
from tests.integration.slurm.srtctl_setup import agg_vllm_recipe, bench_command, write_recipe

pytestmark = pytest.mark.integration


def test_apply_json_watch_completed_and_collect(srtctl, tmp_path, record_property):
    tag = JobTag("9001", 1, "local-slurm_0")
    recipe = write_recipe(tmp_path / "agg.yaml", agg_vllm_recipe(
        srtctl, name="infersweep-agg", command=bench_command(concurrency=4, prompts=16),
        sbatch_directives={"comment": tag.comment}))

    t0 = time.monotonic()
    res = srtctl.apply(recipe, env=srtctl.env(RUNNER_NAME=tag.name))
    assert res.returncode == 0, res.stderr[-3000:]
    assert len(res.records) == 1, f"expected one JSON line, got: {res.stdout!r}"
    rec = res.record
    assert rec["status"] == "submitted"
    job = rec["slurm_job_id"]
    out = Path(rec["output_dir"])
    assert out == srtctl.outputs / job and Path(rec["metadata_path"]).is_file()

    final = SlurmWatcher(interval=1, max_interval=5).wait([job], timeout=300)
    record_property("submit_to_complete_s", round(time.monotonic() - t0, 1))
    sweep_log = out / "logs" / f"sweep_{job}.log"
    assert final[job].state is State.COMPLETED, sweep_log.read_text()[-4000:]
    assert final[job].exit_code == "0:0"

    result = json.loads((out / "logs" / "infersweep" / "conc4.json").read_text())
    assert result["completed"] == 16 and result["max_concurrency"] == 4
    assert "Sweep completed successfully" in sweep_log.read_text()
    compute_python = srtctl.root / ".venv-compute" / "bin" / "python"
    version = srtctl.cluster.run(str(compute_python), "--version").stdout
    assert ("3.12." in version) == (srtctl.python312 is not None), version
    assert "engine double: vllm serve /model" in (out / "logs" / "node1_agg_w0.out").read_text()

    # The job carries the run's name and tag, as the launcher will set them.
    script = (out / "sbatch_script.sh").read_text()
    assert f"--job-name={tag.name}" in script and f"--comment={tag.comment}" in script
    # srtslurm.yaml was read (srtctl drops a file it cannot parse with only a warning).
    assert "--partition=local" in script and "--account=default" in script
    assert "--segment" not in script
    name = srtctl.cluster.run("sacct", "-X", "-n", "-P", "-o", "JobName", "-j", job).stdout
    if srtctl.cluster.accounting:
        assert name.strip() == tag.name


def test_benchmark_failure_fails_the_job(srtctl, tmp_path):
    """The benchmark step's exit code becomes the job's: a failing client means FAILED."""
    recipe = write_recipe(tmp_path / "fail.yaml", agg_vllm_recipe(
        srtctl, name="infersweep-agg-fail", command="echo client failed >&2; exit 3"))
    res = srtctl.apply(recipe)
    assert res.returncode == 0 and res.record["status"] == "submitted", res.stderr[-3000:]
    job = res.record["slurm_job_id"]
    final = SlurmWatcher(interval=1, max_interval=5).wait([job], timeout=300)
    assert final[job].state is State.FAILED
    assert final[job].exit_code == "3:0"


def test_unknown_recipe_key_is_an_error_line(srtctl, tmp_path):
    """srtctl's error contract: one `{"status": "error"}` line, exit 1, nothing submitted."""
    bad = agg_vllm_recipe(srtctl, name="bad", command="true")
    bad["benchmark"]["bogus"] = 1
    before = srtctl.cluster.queued()
    res = srtctl.apply(write_recipe(tmp_path / "bad.yaml", bad))
    assert res.returncode == 1
    assert res.record["status"] == "error" and "bogus" in res.record["error"]
    assert srtctl.cluster.queued() == before


def test_cancel_mid_run_leaves_nothing_behind(srtctl, tmp_path):
    """`scancel <id>` of a running srtctl job: CANCELLED, gone from squeue, the engine
    stopped (its port free again), and what the job wrote so far still there to collect."""
    recipe = write_recipe(tmp_path / "long.yaml", agg_vllm_recipe(
        srtctl, name="infersweep-agg-cancel", command="echo benchmark started; sleep 600"))
    res = srtctl.apply(recipe)
    assert res.returncode == 0, res.stderr[-3000:]
    job = res.record["slurm_job_id"]
    out = Path(res.record["output_dir"])
    bench_log = out / "logs" / "benchmark.out"
    wait_until(lambda: bench_log.is_file() and "benchmark started" in bench_log.read_text(),
               120, "the benchmark step to start")

    w = SlurmWatcher(interval=0.5, max_interval=2)
    w.cancel(job)
    assert w.wait([job], timeout=90)[job].state is State.CANCELLED
    # CANCELLED is recorded at once; squeue lists the job until its steps are killed.
    wait_until(lambda: job not in srtctl.cluster.queued(), 60, f"job {job} to leave squeue")
    wait_until(lambda: port_free(8000), 30, "the engine double to release port 8000")
    wait_until(lambda: not processes_mentioning(str(out)), 60,
               f"every process of job {job} (orchestrator, steps) to exit")
    assert (out / "logs" / "node1_agg_w0.out").is_file()
    assert (out / "logs" / f"sweep_{job}.log").is_file()


def processes_mentioning(text: str) -> list[str]:
    """Command lines of live processes that contain ``text`` (this job's output folder)."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            args = cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if text in args:
            found.append(args)
    return found


def port_free(port: int) -> bool:
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True
