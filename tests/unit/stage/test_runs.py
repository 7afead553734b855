"""Which run may be staged: workflow, event, repository, head commit, completion, and the
labels when it was created (rebuilt from the timeline)."""

from __future__ import annotations

import pytest

from infersweep.stage import runs

HEAD = "a" * 40
FULL = "full-sweep-fail-fast"


def _ev(event, name, at):
    return {"event": event, "label": {"name": name}, "created_at": at}


TIMELINE = [
    {"event": "commented", "created_at": "2026-11-30T07:00:00Z"},
    _ev("labeled", "sweep-enabled", "2026-11-30T08:00:00Z"),
    _ev("unlabeled", "sweep-enabled", "2026-11-30T09:00:00Z"),
    _ev("labeled", FULL, "2026-11-30T09:00:00Z"),
    _ev("unlabeled", FULL, "2026-11-30T12:00:00Z"),
    _ev("labeled", "agentx-fast", "2026-11-30T13:00:00Z"),
    _ev("labeled", FULL, "2026-11-30T14:00:00Z"),
]


@pytest.mark.parametrize(("moment", "labels"), [
    ("2026-11-30T07:30:00Z", set()),
    ("2026-11-30T08:30:00Z", {"sweep-enabled"}),
    ("2026-11-30T09:00:00Z", {FULL}),            # events at the very second count
    ("2026-11-30T11:59:59Z", {FULL}),
    ("2026-11-30T12:30:00Z", set()),
    ("2026-11-30T15:00:00Z", {"agentx-fast", FULL}),
])
def test_labels_at_replays_the_timeline(moment, labels):
    assert runs.labels_at(TIMELINE, moment) == labels


def test_labels_at_orders_events_by_time_not_by_position():
    shuffled = [TIMELINE[4], TIMELINE[3], TIMELINE[0]]
    assert runs.labels_at(shuffled, "2026-11-30T10:00:00Z") == {FULL}
    assert runs.labels_at(shuffled, "2026-11-30T12:00:01Z") == set()


def _run(**over):
    run = {"id": 5, "path": ".github/workflows/run-sweep.yml", "event": "pull_request",
           "head_sha": HEAD, "status": "completed", "conclusion": "failure",
           "created_at": "2026-11-30T10:00:00Z", "run_attempt": 2,
           "repository": {"full_name": "o/r"}}
    run.update(over)
    return run


def _problems(run):
    return runs.problems(run, repository="o/r", commits={HEAD, "c" * 40}, timeline=TIMELINE)


def test_a_valid_run_has_no_problems_whatever_its_conclusion():
    assert _problems(_run()) == []
    cand = runs.candidate(_run(), TIMELINE)
    assert (cand.run_id, cand.attempt, cand.labels) == (5, 2, (FULL,))


@pytest.mark.parametrize(("over", "fragment"), [
    ({"path": ".github/workflows/e2e-tests.yml"}, "not .github/workflows/run-sweep.yml"),
    ({"path": ".github/workflows/run-sweep.yaml"}, "not .github/workflows/run-sweep.yml"),
    ({"event": "workflow_dispatch"}, "workflow_dispatch event, not pull_request"),
    ({"event": "push"}, "push event"),
    ({"head_sha": "d" * 40}, "is not a commit of this pull request"),
    ({"status": "in_progress"}, "has not completed"),
    ({"created_at": "2026-11-30T08:30:00Z"}, "carries no full-sweep label"),
    ({"created_at": "2026-11-30T12:30:00Z"}, "carries no full-sweep label"),
    ({"created_at": "2026-11-30T15:00:00Z"}, "`agentx-fast`"),
    ({"repository": {"full_name": "mallory/r"}}, "ran in mallory/r"),
])
def test_each_reason_a_run_is_refused(over, fragment):
    found = _problems(_run(**over))
    assert len(found) == 1 and fragment in found[0], found
