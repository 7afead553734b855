"""The job watcher against the real local Slurm: real sbatch, sacct, scontrol and scancel."""

from __future__ import annotations

import time

import pytest

from infersweep.rowjobs.jobtag import JobTag
from infersweep.rowjobs.slurm import DeadlineExceeded, SlurmWatcher, run_command, tagged_jobs
from infersweep.rowjobs.slurm_state import State
from tests.integration.slurm.conftest import wait_until

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def timeout_job(local_slurm):
    """Submitted as soon as the module starts, so its minute-long time limit (Slurm's smallest)
    runs out while the other tests run; test_time_limit (last in the file) collects it."""
    return local_slurm.submit("sleep 600", "--time=1", "--job-name=watcher-timeout")


@pytest.fixture(autouse=True)
def _start_timeout_job_first(timeout_job):
    return timeout_job


def counting_runner():
    calls = []

    def run(argv, timeout):
        calls.append(list(argv))
        return run_command(argv, timeout)

    return run, calls


def test_completed_job(local_slurm):
    job = local_slurm.submit("echo hello", "--nodes=1")
    w = SlurmWatcher(interval=0.5, max_interval=2)
    final = w.wait([job], timeout=60)
    assert final[job].state is State.COMPLETED
    assert final[job].exit_code == "0:0" and final[job].succeeded


def test_failed_job_keeps_its_exit_code(local_slurm):
    job = local_slurm.submit("exit 3", "--nodes=1")
    final = SlurmWatcher(interval=0.5, max_interval=2).wait([job], timeout=60)
    assert final[job].state is State.FAILED
    assert final[job].exit_code == "3:0" and not final[job].succeeded


def test_multi_node_gpu_job(local_slurm):
    """A 2P1D-sized allocation: three nodes with all eight GPUs each, one step per node."""
    job = local_slurm.submit("srun --ntasks-per-node=1 true", "--nodes=3", "--gres=gpu:8")
    final = SlurmWatcher(interval=0.5, max_interval=2).wait([job], timeout=90)
    assert final[job].state is State.COMPLETED


def test_cancelled_by_id(local_slurm):
    job = local_slurm.submit("sleep 600", "--nodes=1")
    other = local_slurm.submit("sleep 600", "--nodes=1", "--job-name=bystander")
    w = SlurmWatcher(interval=0.5, max_interval=2)
    w.watch(job)
    wait_until(lambda: w.poll()[job].state is State.RUNNING, 60, f"job {job} to run")
    w.cancel(job)
    final = w.wait([job], timeout=60)
    assert final[job].state is State.CANCELLED
    wait_until(lambda: job not in local_slurm.queued(), 60, f"job {job} to leave squeue")
    assert other in local_slurm.queued(), "cancelling one job must not touch another"
    w.cancel(other)
    assert w.wait([other], timeout=60)[other].state is State.CANCELLED


def test_deadline_expires_in_the_watcher(local_slurm):
    job = local_slurm.submit("sleep 600", "--nodes=1")
    w = SlurmWatcher(interval=0.5, max_interval=1)
    with pytest.raises(DeadlineExceeded) as exc:
        w.wait([job], timeout=4)
    assert exc.value.statuses[job].state in (State.PENDING, State.RUNNING)
    assert job in local_slurm.queued(), "a deadline in the watcher leaves the job to its owner"
    w.cancel(job)
    assert w.wait([job], timeout=60)[job].state is State.CANCELLED


def test_many_jobs_one_query_per_poll(local_slurm):
    jobs = [local_slurm.submit(f"sleep {1 + i % 3}", "--nodes=1") for i in range(12)]
    run, calls = counting_runner()
    w = SlurmWatcher(run=run, interval=0.5, max_interval=1,
                     accounting="sacct" if local_slurm.accounting else "scontrol")
    polls = []
    real_poll = w.poll

    def poll():
        polls.append(1)
        return real_poll()

    w.poll = poll
    final = w.wait(jobs, timeout=120)
    assert all(final[j].state is State.COMPLETED for j in jobs)
    assert len(calls) == len(polls) == w.queries, "exactly one Slurm query per poll"
    if local_slurm.accounting:
        assert calls[0][-2:] == ["-j", ",".join(jobs)], "the first poll asks about all 12 at once"
        assert all(c[0] == "sacct" for c in calls)


def test_scontrol_backend(local_slurm):
    """The fallback used where accounting is disabled, against the real slurmctld."""
    ok = local_slurm.submit("true", "--nodes=1")
    bad = local_slurm.submit("exit 2", "--nodes=1")
    w = SlurmWatcher(accounting="scontrol", interval=0.5, max_interval=2)
    final = w.wait([ok, bad], timeout=60)
    assert final[ok].state is State.COMPLETED
    assert final[bad].state is State.FAILED and final[bad].exit_code == "2:0"
    assert all(c[:4] == ["scontrol", "-o", "show", "job"] for c in w.commands)


def test_job_name_and_comment_find_the_job(local_slurm):
    tag = JobTag("4242", 2, "local-test_0")
    job = local_slurm.submit("sleep 600", "--nodes=1", f"--job-name={tag.name}",
                             f"--comment={tag.comment}")
    assert tagged_jobs(tag) == [job]
    assert tagged_jobs(JobTag("4242", 1, "local-test_0")) == []  # another attempt: not ours
    name = local_slurm.run("squeue", "--noheader", "-j", job, "-o", "%j").stdout.strip()
    assert name == tag.name
    w = SlurmWatcher(interval=0.5)
    w.cancel(job)
    assert w.wait([job], timeout=60)[job].state is State.CANCELLED


def test_time_limit(local_slurm, timeout_job):
    final = SlurmWatcher(interval=1, max_interval=5).wait([timeout_job], timeout=180)
    assert final[timeout_job].state is State.TIMEOUT


def test_accounting_outage_is_unknown_then_retried(local_slurm):
    """slurmdbd stopped mid-watch: sacct fails for real; the watcher reports UNKNOWN (never
    "gone"), backs off, and reads the final state once accounting is back."""
    if not local_slurm.accounting:
        pytest.skip("the cluster runs without slurmdbd (INFERSWEEP_SLURM_ACCOUNTING=none)")
    job = local_slurm.submit("sleep 2", "--nodes=1")
    w = SlurmWatcher(accounting="sacct", interval=0.5, max_interval=2)
    w.watch(job)
    wait_until(lambda: w.poll()[job].state is not State.UNKNOWN, 30, "sacct to list the job")
    local_slurm.stop_slurmdbd()
    try:
        during = w.poll()[job]
        assert during.state is State.UNKNOWN and "sacct failed" in during.reason
        time.sleep(3)  # the job finishes while accounting is down
    finally:
        local_slurm.start_slurmdbd()
    final = w.wait([job], timeout=90)
    assert final[job].state is State.COMPLETED
    assert w.failed_queries >= 1
