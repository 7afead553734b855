"""Table-driven tests of the sweep decision.

Every combination of event kind x primary labels (none / each / two) x modifiers x draft x
fork x ``[skip-sweep]`` is checked against :func:`expected`, written here from the spec's
label table without looking at the implementation. Label names are spelled out literally
on purpose: renaming a label must break this test.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import pytest

from infersweep.diagnostics import InputError
from infersweep.policy import labels as L
from infersweep.policy.decide import FIELDS, decide, decide_event, facts_from_event

REPO = "acme/infersweep"
HEAD = "a" * 40
BASE = "b" * 40

# primary -> (matrix, canary, fail-fast, stageable), the spec's label table
TABLE = {
    "sweep-enabled": ("trimmed", False, False, False),
    "full-sweep-fail-fast": ("full", True, True, True),
    "full-sweep-enabled": ("full", True, False, True),
    "full-sweep-fail-fast-no-canary": ("full", False, True, True),
    "non-canary-full-sweep-enabled": ("full", False, False, True),
}
MODIFIERS = ("all-evals", "evals-only", "agentx-fast")
SCHEDULING = ("skip_queue", "ci-patchwork", "engine-patch", "ci-patchwork-waived",
              "ci-checklist-complete")
UNRELATED = "documentation"

PRIMARY_SETS = [()] + [(p,) for p in TABLE] + list(itertools.combinations(TABLE, 2))
MODIFIER_SETS = [(), ("all-evals",), ("evals-only",), ("agentx-fast",),
                 ("all-evals", "evals-only"), ("skip_queue",)]
ACTED = list(TABLE) + list(MODIFIERS) + list(SCHEDULING) + [UNRELATED]
PR_EVENT_KINDS = ([("synchronize", ""), ("ready_for_review", ""), ("opened", ""),
                   ("reopened", ""), ("edited", ""), ("closed", "")]
                  + [("labeled", lab) for lab in ACTED] + [("unlabeled", lab) for lab in ACTED])


@dataclass(frozen=True)
class Scenario:
    action: str
    acted: str
    labels: tuple[str, ...]
    draft: bool
    fork: bool
    skip_marker: bool


def pr_payload(s: Scenario) -> dict:
    head_repo = "someone/infersweep" if s.fork else REPO
    payload = {
        "action": s.action,
        "number": 7,
        "pull_request": {
            "number": 7, "draft": s.draft,
            "labels": [{"name": n} for n in s.labels],
            "head": {"sha": HEAD, "ref": "feature", "repo": {"full_name": head_repo}},
            "base": {"sha": BASE, "ref": "main", "repo": {"full_name": REPO}},
        },
        "repository": {"full_name": REPO, "default_branch": "main"},
    }
    if s.acted:
        payload["label"] = {"name": s.acted}
    return payload


def expected(s: Scenario) -> dict:
    """The spec, restated: what each scenario must decide."""
    on = set(s.labels)
    sweep_changing = set(TABLE) | set(MODIFIERS)
    relevant = s.action in ("opened", "reopened", "synchronize", "ready_for_review",
                            "labeled", "unlabeled")
    if s.action in ("labeled", "unlabeled") and s.acted not in sweep_changing:
        relevant = False
    out = {"check-changelog": relevant and not s.draft, "supersedes-active": relevant,
           "mode": "none", "canary": False, "fail-fast": False, "stageable": False,
           "all-evals": False, "evals-only": False, "agentx-fast": False, "trim-conc": False,
           "primary-label": ""}
    primaries = sorted(on & set(TABLE))
    if not relevant or s.draft:
        return {**out, "decision": "skip"}
    if len(primaries) >= 2:
        return {**out, "decision": "error"}
    if s.fork or not primaries or s.skip_marker:
        return {**out, "decision": "skip"}
    matrix, canary, fail_fast, stageable = TABLE[primaries[0]]
    if "agentx-fast" in on:
        stageable = False
    return {**out, "decision": "run", "mode": matrix, "canary": canary, "fail-fast": fail_fast,
            "stageable": stageable, "all-evals": "all-evals" in on,
            "evals-only": "evals-only" in on, "agentx-fast": "agentx-fast" in on,
            "trim-conc": matrix == "trimmed", "primary-label": primaries[0]}


def pr_scenarios(action: str, acted: str):
    for prim, mods, draft, fork, marker in itertools.product(
            PRIMARY_SETS, MODIFIER_SETS, (False, True), (False, True), (False, True)):
        on = set(prim) | set(mods)
        if action == "labeled":
            on.add(acted)
        elif action == "unlabeled":
            on.discard(acted)
        yield Scenario(action, acted, tuple(sorted(on)), draft, fork, marker)


@pytest.mark.parametrize(("action", "acted"), PR_EVENT_KINDS,
                         ids=[f"{a}-{b}" if b else a for a, b in PR_EVENT_KINDS])
def test_every_pull_request_combination_matches_the_spec(action, acted):
    mismatches = []
    count = 0
    for s in pr_scenarios(action, acted):
        message = "fix things [skip-sweep]" if s.skip_marker else "fix things"
        got = decide_event("pull_request", pr_payload(s), head_commit_message=message,
                           run_id="99").to_dict()
        want = expected(s)
        diff = {k: (got[k], v) for k, v in want.items() if got[k] != v}
        assert got["run"] is (got["decision"] == "run")
        assert got["reason"], s
        if diff:
            mismatches.append((s, diff))
        count += 1
    assert count == len(PRIMARY_SETS) * len(MODIFIER_SETS) * 8
    assert not mismatches, "\n".join(f"{s}: {d}" for s, d in mismatches[:20])


@pytest.mark.parametrize("branch", ["main", "feature"])
@pytest.mark.parametrize("marker", [False, True])
def test_every_push_combination(branch, marker):
    payload = {"ref": f"refs/heads/{branch}", "before": BASE, "after": HEAD,
               "head_commit": {"message": "x [skip-sweep]" if marker else "x"},
               "repository": {"full_name": REPO, "default_branch": "main"}}
    d = decide_event("push", payload).to_dict()
    if branch == "main":
        assert d["decision"] == "run" and d["mode"] == "full"
        assert (d["diff-base"], d["diff-head"]) == (BASE, HEAD)
    else:
        assert d["decision"] == "skip" and d["mode"] == "none"
    assert d["check-changelog"] is (branch == "main")  # pre-flight before any GPU job
    for flag in ("canary", "fail-fast", "all-evals", "evals-only", "agentx-fast", "stageable",
                 "trim-conc", "supersedes-active"):
        assert d[flag] is False, flag
    assert d["skip-sweep-marker"] is marker


DISPATCH_LABELS = ["", *TABLE, "full-sweep", "all-evals"]
DISPATCH_MODIFIERS = ["", "all-evals", "evals-only, agentx-fast", "skip_queue", "typo-evals"]


@pytest.mark.parametrize("label", DISPATCH_LABELS)
@pytest.mark.parametrize("modifiers", DISPATCH_MODIFIERS)
def test_every_workflow_dispatch_combination(label, modifiers):
    payload = {"ref": "refs/heads/main", "inputs": {"sweep-label": label, "modifiers": modifiers},
               "repository": {"full_name": REPO, "default_branch": "main"}}
    d = decide_event("workflow_dispatch", payload, sha=HEAD, run_id="5").to_dict()
    primary = label or "full-sweep-fail-fast"
    if primary not in TABLE or "typo-evals" in modifiers:
        assert d["decision"] == "error" and not d["run"]
        return
    matrix, canary, fail_fast, _ = TABLE[primary]
    assert d["decision"] == "run"
    assert (d["mode"], d["canary"], d["fail-fast"]) == (matrix, canary, fail_fast)
    assert d["stageable"] is False  # only PR runs are staged
    assert d["check-changelog"] is True
    assert d["evals-only"] is ("evals-only" in modifiers)
    assert d["skip-queue"] is ("skip_queue" in modifiers)
    assert d["diff-head"] == HEAD and d["concurrency-group"] == "sweep-dispatch-5"


@pytest.mark.parametrize("event", ["issue_comment", "pull_request_target", "schedule"])
def test_other_events_skip(event):
    d = decide_event(event, {"repository": {"full_name": REPO}})
    assert d.decision == "skip" and event in d.reason


# -- named cases from the spec ----------------------------------------------------------------

def _pr(action="synchronize", labels=(), acted="", draft=False, fork=False, message="msg"):
    s = Scenario(action, acted, tuple(labels), draft, fork, False)
    return decide_event("pull_request", pr_payload(s), head_commit_message=message,
                        run_id="42")


def test_recommended_label_runs_full_with_canary_and_fail_fast():
    d = _pr(labels=["full-sweep-fail-fast"])
    assert (d.decision, d.mode, d.canary, d.fail_fast, d.stageable) == (
        "run", "full", True, True, True)
    assert d.concurrency_group == "sweep-pr-7" and d.supersedes_active
    assert (d.diff_base, d.diff_head) == ("origin/main", HEAD)


def test_sweep_enabled_trims_the_matrix_and_is_not_stageable():
    d = _pr(labels=["sweep-enabled"])
    assert (d.decision, d.mode, d.trim_conc, d.canary, d.stageable) == (
        "run", "trimmed", True, False, False)


def test_two_primary_labels_is_an_error_naming_both():
    d = _pr(labels=["full-sweep-enabled", "sweep-enabled"])
    assert d.decision == "error" and not d.run
    assert "full-sweep-enabled" in d.reason and "sweep-enabled" in d.reason
    assert "pick exactly one" in d.reason


def test_modifiers_alone_do_nothing():
    d = _pr(labels=["all-evals", "evals-only"])
    assert d.decision == "skip" and "need a primary label" in d.reason
    assert d.check_changelog  # the changelog is still validated


def test_full_sweep_with_all_evals_stays_stageable():
    d = _pr(labels=["full-sweep-enabled", "all-evals"])
    assert d.all_evals and d.stageable


def test_agentx_fast_is_not_stageable():
    d = _pr(labels=["full-sweep-enabled", "agentx-fast"])
    assert d.run and not d.stageable


def test_evals_only_is_stageable_its_evals_are_staged_like_any_other_row():
    d = _pr(labels=["full-sweep-enabled", "evals-only"])
    assert d.run and d.evals_only and d.stageable


def test_no_label_skips_with_a_hint():
    d = _pr()
    assert d.decision == "skip" and "full-sweep-fail-fast" in d.reason


def test_fork_pr_skips():
    d = _pr(labels=["full-sweep-fail-fast"], fork=True)
    assert d.decision == "skip" and "fork" in d.reason and d.fork


def test_deleted_fork_counts_as_fork():
    s = Scenario("synchronize", "", ("full-sweep-fail-fast",), False, False, False)
    payload = pr_payload(s)
    payload["pull_request"]["head"]["repo"] = None
    d = decide_event("pull_request", payload, head_commit_message="")
    assert d.decision == "skip" and d.fork


@pytest.mark.parametrize("label", ["full-sweep-enabled", "all-evals"])
def test_labeling_with_a_sweep_label_restarts_the_sweep(label):
    d = _pr("labeled", labels=["full-sweep-enabled", label], acted=label)
    assert d.decision == "run" and d.supersedes_active


@pytest.mark.parametrize("label", ["documentation", "skip_queue", "ci-checklist-complete",
                                   "ci-patchwork"])
def test_unrelated_and_scheduling_labels_never_restart_a_sweep(label):
    # Deliberate difference from InferenceX: scheduling labels do not cancel a running sweep.
    d = _pr("labeled", labels=["full-sweep-fail-fast", label], acted=label)
    assert d.decision == "skip" and not d.supersedes_active
    assert d.concurrency_group == "sweep-pr-7-42"
    assert not d.check_changelog


def test_removing_the_primary_label_cancels_the_sweep():
    d = _pr("unlabeled", labels=["all-evals"], acted="full-sweep-fail-fast")
    assert d.decision == "skip" and "removed" in d.reason
    assert d.supersedes_active and d.concurrency_group == "sweep-pr-7"


def test_labeled_payload_that_lags_still_counts_the_new_label():
    s = Scenario("labeled", "full-sweep-enabled", (), False, False, False)
    d = decide_event("pull_request", pr_payload(s), head_commit_message="")
    assert d.decision == "run" and d.primary_label == "full-sweep-enabled"


def test_draft_skips_and_ready_for_review_runs():
    assert _pr(labels=["full-sweep-fail-fast"], draft=True).decision == "skip"
    d = _pr("ready_for_review", labels=["full-sweep-fail-fast"])
    assert d.decision == "run"


def test_draft_with_two_primaries_is_not_yet_an_error():
    d = _pr(labels=["full-sweep-enabled", "sweep-enabled"], draft=True)
    assert d.decision == "skip"


def test_skip_sweep_in_pr_head_commit_skips():
    d = _pr(labels=["full-sweep-fail-fast"], message="wip\n\n[skip-sweep]")
    assert d.decision == "skip" and "[skip-sweep]" in d.reason and d.skip_sweep_marker


def test_unknown_head_commit_message_is_reported():
    s = Scenario("synchronize", "", ("full-sweep-fail-fast",), False, False, False)
    d = decide_event("pull_request", pr_payload(s))
    assert d.run and not d.head_commit_message_checked


def test_push_to_main_runs_even_with_skip_sweep():
    payload = {"ref": "refs/heads/main", "before": "0" * 40, "after": HEAD,
               "head_commit": {"message": "merge [skip-sweep]"},
               "repository": {"full_name": REPO, "default_branch": "main"}}
    d = decide_event("push", payload)
    assert d.decision == "run" and d.mode == "full" and not d.canary and not d.fail_fast
    assert "ignored" in d.reason and d.diff_base == ""  # a new branch has no 'before'


def test_opened_with_a_primary_label_runs_and_edits_do_not():
    assert _pr("opened", labels=["full-sweep-fail-fast"]).decision == "run"
    assert _pr("reopened", labels=["full-sweep-fail-fast"]).decision == "run"
    d = _pr("edited", labels=["full-sweep-fail-fast"])
    assert d.decision == "skip" and "edited" in d.reason and not d.supersedes_active


def test_pull_request_without_pull_request_object_is_bad_input():
    with pytest.raises(InputError, match="without a 'pull_request' object"):
        facts_from_event("pull_request", {"action": "synchronize"})


def test_payload_must_be_an_object():
    with pytest.raises(InputError, match="not a JSON object"):
        facts_from_event("push", [])


def test_decision_fields_are_stable():
    # The workflow consumes these names; changing one is a breaking change.
    assert FIELDS == (
        "decision", "run", "reason", "event", "action", "mode", "trim-conc", "canary",
        "fail-fast", "all-evals", "evals-only", "agentx-fast", "skip-queue", "stageable",
        "check-changelog", "primary-label", "labels", "pr-number", "head-sha", "base-ref",
        "base-sha", "diff-base", "diff-head", "fork", "draft", "skip-sweep-marker",
        "head-commit-message-checked", "supersedes-active", "concurrency-group")


def test_label_module_is_the_vocabulary_this_test_spells_out():
    assert set(L.PRIMARY_LABELS) == set(TABLE)
    assert set(L.MODIFIER_LABELS) == set(MODIFIERS)
    assert set(L.SCHEDULING_LABELS) == set(SCHEDULING)
    assert len(L.RECOGNIZED_LABELS) == 13
    assert L.RECOMMENDED_PRIMARY == "full-sweep-fail-fast"
    for name, (matrix, canary, fail_fast, stageable) in TABLE.items():
        p = L.PRIMARIES[name]
        assert (p.mode.value, p.canary, p.fail_fast, p.stageable) == (
            matrix, canary, fail_fast, stageable)
    assert {row["label"] for row in L.label_table()} == L.RECOGNIZED_LABELS


def test_decide_is_pure_over_facts():
    f = facts_from_event("pull_request", pr_payload(
        Scenario("synchronize", "", ("full-sweep-fail-fast",), False, False, False)),
        head_commit_message="")
    assert decide(f).to_dict() == decide(f).to_dict()
