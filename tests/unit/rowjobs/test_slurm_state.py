"""Parsing recorded sacct/scontrol output (Slurm 22.05) into normalised states."""

from __future__ import annotations

import pytest

from infersweep.rowjobs.jobtag import JobTag
from infersweep.rowjobs.slurm_state import State, normalise, parse_sacct, parse_scontrol

# Recorded from `sacct -X --noheader --parsable2 -o JobIDRaw,State,ExitCode,Reason -j ...`
SACCT = """\
1|COMPLETED|0:0|None
2|FAILED|3:0|None
3|CANCELLED by 0|0:15|None
4|TIMEOUT|0:0|None
5|PENDING|0:0|Resources
6|RUNNING|0:0|None
7|OUT_OF_MEMORY|0:125|None
8|NODE_FAIL|1:0|None
8|COMPLETED|0:0|None
"""

# Recorded from `scontrol -o show job 2` (trimmed to the fields that matter).
SCONTROL = (
    "JobId=2 JobName=wrap UserId=root(0) GroupId=root(0) JobState=FAILED Reason=NonZeroExitCode "
    "Dependency=(null) Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=3:0 RunTime=00:00:00\n"
    "JobId=9 JobName=infersweep-1-a1-r JobState=COMPLETING Reason=None ExitCode=0:0\n"
)


@pytest.mark.parametrize("raw, state", [
    ("COMPLETED", State.COMPLETED), ("CANCELLED by 0", State.CANCELLED),
    ("CANCELLED+", State.CANCELLED), ("COMPLETING", State.RUNNING),
    ("CONFIGURING", State.PENDING), ("REQUEUED", State.PENDING), ("SUSPENDED", State.RUNNING),
    ("OUT_OF_MEMORY", State.OUT_OF_MEMORY), ("NODE_FAIL", State.NODE_FAIL),
    ("BOOT_FAIL", State.BOOT_FAIL), ("DEADLINE", State.DEADLINE), ("PREEMPTED", State.PREEMPTED),
    ("SPECIAL_EXIT", State.FAILED), ("REVOKED", State.CANCELLED), ("", State.UNKNOWN),
    ("SOMETHING_NEW", State.UNKNOWN),
])
def test_normalise(raw, state):
    assert normalise(raw) is state


def test_terminal_states():
    assert not State.PENDING.terminal and not State.RUNNING.terminal and not State.UNKNOWN.terminal
    assert all(s.terminal for s in (State.COMPLETED, State.FAILED, State.TIMEOUT, State.CANCELLED,
                                    State.NODE_FAIL, State.OUT_OF_MEMORY))


def test_parse_sacct():
    got = parse_sacct(SACCT)
    assert {j: s.state for j, s in got.items()} == {
        "1": State.COMPLETED, "2": State.FAILED, "3": State.CANCELLED, "4": State.TIMEOUT,
        "5": State.PENDING, "6": State.RUNNING, "7": State.OUT_OF_MEMORY, "8": State.COMPLETED}
    assert got["1"].succeeded and not got["2"].succeeded
    assert got["2"].exit_code == "3:0"
    assert got["5"].reason == "Resources" and got["1"].reason == ""
    assert got["3"].raw_state == "CANCELLED by 0"


def test_parse_sacct_ignores_steps_and_noise():
    assert parse_sacct("1.batch|COMPLETED|0:0|None\n\ngarbage\n|||\n") == {}


def test_parse_scontrol():
    got = parse_scontrol(SCONTROL)
    assert got["2"].state is State.FAILED and got["2"].exit_code == "3:0"
    assert got["2"].reason == "NonZeroExitCode"
    assert got["9"].state is State.RUNNING and got["9"].reason == ""


def test_job_tag_round_trip():
    tag = JobTag("12345678", 2, "mi355x-amds_0")
    assert tag.name == "infersweep-12345678-a2-mi355x-amds_0"
    assert tag.comment == "infersweep:run_id=12345678,attempt=2,runner=mi355x-amds_0"
    assert JobTag.from_comment(tag.comment) == tag
    assert JobTag.from_comment("someone else's job") is None


def test_job_tag_sanitises():
    tag = JobTag("run 1/2", 1, "gpu box;rm -rf")
    assert tag.name == "infersweep-run_1_2-a1-gpu_box_rm_-rf"
    assert " " not in tag.comment and ";" not in tag.comment


@pytest.mark.parametrize("args, fragment", [
    (("", 1, "r"), "run id"), (("1", 0, "r"), "attempt"), (("1", 1, " "), "runner")])
def test_job_tag_rejects(args, fragment):
    with pytest.raises(ValueError, match=fragment):
        JobTag(*args)
