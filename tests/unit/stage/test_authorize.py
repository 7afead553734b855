"""Who may stage and which pull requests: permissions, the policy's full-sweep labels, forks."""

from __future__ import annotations

import pytest

from infersweep.policy import labels as L
from infersweep.stage import authorize


def test_full_sweep_labels_are_the_policy_modules_stageable_primaries():
    assert set(authorize.stageable_labels()) == {
        name for name, p in L.PRIMARIES.items() if p.stageable}
    assert L.FULL_SWEEP_FAIL_FAST in authorize.stageable_labels()
    assert L.SWEEP_ENABLED not in authorize.stageable_labels()


@pytest.mark.parametrize(("permission", "ok"), [
    ("admin", True), ("maintain", True), ("write", True), ("triage", False), ("read", False),
    ("none", False), ("", False), ("Write", False)])
def test_write_maintain_or_admin(permission, ok):
    assert authorize.may_stage(permission) is ok


@pytest.mark.parametrize(("labels", "fragment"), [
    ([], "carries no full-sweep label"),
    ([L.SWEEP_ENABLED], "carries no full-sweep label"),
    (["bug", L.ALL_EVALS], "carries no full-sweep label"),
    ([L.FULL_SWEEP_ENABLED, L.AGENTX_FAST], "`agentx-fast`, which makes a sweep that is not"),
])
def test_labels_that_do_not_make_a_stageable_sweep(labels, fragment):
    assert fragment in authorize.label_problem(labels)


def test_an_evals_only_sweep_is_stageable():
    assert authorize.label_problem([L.FULL_SWEEP_FAIL_FAST, L.EVALS_ONLY]) is None


@pytest.mark.parametrize("labels", [
    [L.FULL_SWEEP_FAIL_FAST], [L.FULL_SWEEP_ENABLED, L.ALL_EVALS, "bug"],
    [L.NON_CANARY_FULL_SWEEP_ENABLED, L.SKIP_QUEUE], [L.FULL_SWEEP_FAIL_FAST_NO_CANARY]])
def test_labels_that_make_a_stageable_sweep(labels):
    assert authorize.label_problem(labels) is None


def _pr(head_repo):
    return {"head": {"repo": head_repo}, "base": {"repo": {"full_name": "o/r"}}}


def test_forks_are_told_apart_from_the_repository():
    assert authorize.fork_of(_pr({"full_name": "o/r"})) is None
    assert authorize.fork_of(_pr({"full_name": "mallory/r"})) == "mallory/r"
    assert authorize.fork_of(_pr(None)) == "a deleted repository"
