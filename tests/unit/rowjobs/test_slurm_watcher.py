"""The watcher's polling logic with a scripted command runner (a test double for the Slurm
clients replaying recorded outputs). The same behaviour against the real local Slurm is in
tests/integration/slurm/test_watcher.py."""

from __future__ import annotations

import pytest

from infersweep.rowjobs.slurm import CommandResult, DeadlineExceeded, SlurmError, SlurmWatcher
from infersweep.rowjobs.slurm_state import State

DISABLED = "sacct: error: Slurm accounting storage is disabled\n"


class ScriptedSlurm:
    """Answers each command with the next recorded result for that program."""

    def __init__(self, **answers):
        self.answers = {k: list(v) for k, v in answers.items()}
        self.calls: list[list[str]] = []

    def __call__(self, argv, timeout):
        self.calls.append(list(argv))
        queue = self.answers[argv[0]]
        return queue.pop(0) if len(queue) > 1 else queue[0]


class FakeClock:
    def __init__(self):
        self.now = 0.0
        self.sleeps: list[float] = []

    def __call__(self):
        return self.now

    def sleep(self, s):
        self.sleeps.append(s)
        self.now += s


def ok(out):
    return CommandResult(0, out, "")


def watcher(runner, clock=None, **kw):
    clock = clock or FakeClock()
    return SlurmWatcher(run=runner, clock=clock, sleep=clock.sleep, interval=1, max_interval=8,
                        **kw)


def test_one_query_for_all_jobs_per_poll():
    slurm = ScriptedSlurm(sacct=[ok("11|RUNNING|0:0|None\n12|PENDING|0:0|Resources\n"),
                                 ok("11|COMPLETED|0:0|None\n12|RUNNING|0:0|None\n"),
                                 ok("12|FAILED|1:0|None\n")])
    w = watcher(slurm)
    final = w.wait(["11", "12"], timeout=60)
    assert final["11"].state is State.COMPLETED and final["12"].state is State.FAILED
    assert w.queries == 3
    assert slurm.calls[0][-2:] == ["-j", "11,12"]
    assert slurm.calls[2][-2:] == ["-j", "12"]  # a finished job is not asked about again


def test_transient_failure_is_unknown_and_retried_with_backoff():
    clock = FakeClock()
    slurm = ScriptedSlurm(sacct=[CommandResult(1, "", "sacct: error: slurmdbd: connection refused"),
                                 CommandResult(1, "", "sacct: error: slurmdbd: connection refused"),
                                 ok("5|COMPLETED|0:0|None\n")])
    w = watcher(slurm, clock)
    seen = []
    final = w.wait(["5"], timeout=60, on_change=seen.append)
    assert final["5"].state is State.COMPLETED
    assert seen[0].state is State.UNKNOWN and "connection refused" in seen[0].reason
    assert w.failed_queries == 2
    assert clock.sleeps == [2, 4]  # interval 1 doubled after each failure


def test_job_not_yet_in_accounting_is_unknown_not_gone():
    slurm = ScriptedSlurm(sacct=[ok(""), ok("7|RUNNING|0:0|None\n"), ok("7|COMPLETED|0:0|None\n")])
    w = watcher(slurm)
    w.watch("7")
    assert w.poll()["7"].state is State.UNKNOWN
    assert w.wait(["7"], timeout=60)["7"].state is State.COMPLETED


def test_accounting_disabled_falls_back_to_scontrol():
    slurm = ScriptedSlurm(
        sacct=[CommandResult(1, "", DISABLED)],
        scontrol=[ok("JobId=3 JobName=x JobState=RUNNING Reason=None ExitCode=0:0\n"),
                  ok("JobId=3 JobName=x JobState=TIMEOUT Reason=TimeLimit ExitCode=0:0\n")])
    w = watcher(slurm)
    final = w.wait(["3"], timeout=60)
    assert final["3"].state is State.TIMEOUT
    assert w.backend == "scontrol"
    assert [c[0] for c in slurm.calls] == ["sacct", "scontrol", "scontrol"]
    assert slurm.calls[1] == ["scontrol", "-o", "show", "job", "3"]


def test_scontrol_batches_many_jobs_into_one_call():
    slurm = ScriptedSlurm(scontrol=[ok(
        "JobId=1 JobState=COMPLETED ExitCode=0:0\nJobId=2 JobState=FAILED ExitCode=2:0\n"
        "JobId=99 JobState=RUNNING ExitCode=0:0\n")])
    w = watcher(slurm, accounting="scontrol")
    final = w.wait(["1", "2"], timeout=10)
    assert slurm.calls == [["scontrol", "-o", "show", "job"]]
    assert final["2"].exit_code == "2:0"


def test_sacct_only_mode_refuses_disabled_accounting():
    w = watcher(ScriptedSlurm(sacct=[CommandResult(1, "", DISABLED)]), accounting="sacct")
    w.watch("1")
    with pytest.raises(SlurmError, match="accounting storage is disabled"):
        w.poll()


def test_deadline():
    clock = FakeClock()
    w = watcher(ScriptedSlurm(sacct=[ok("4|RUNNING|0:0|None\n")]), clock)
    with pytest.raises(DeadlineExceeded, match="4 RUNNING") as exc:
        w.wait(["4"], timeout=10)
    assert exc.value.statuses["4"].state is State.RUNNING
    assert clock.now == pytest.approx(10)
    assert max(clock.sleeps) <= 8


def test_cancel_is_by_id_only():
    slurm = ScriptedSlurm(scancel=[ok("")])
    w = watcher(slurm)
    w.cancel("42")
    assert slurm.calls == [["scancel", "42"]]
    for bad in ("infersweep-*", "42 43", "--user=root", ""):
        with pytest.raises(ValueError, match="not a Slurm job id"):
            w.cancel(bad)


def test_cancel_failure_is_reported():
    w = watcher(ScriptedSlurm(scancel=[CommandResult(1, "", "scancel: error: Access denied")]))
    with pytest.raises(SlurmError, match="Access denied"):
        w.cancel("42")
