"""run-sweep.yml's policy job, executed by act: a pull request labeled full-sweep-fail-fast
that appends a changelog entry gets a decision to run.

The job checks out the PR's head from the git sandbox (standing in for github.com), sets up
Python from the tool cache, installs the package and runs `infersweep policy decide` on the
event act hands it: the whole path GitHub takes, with no network.
"""

from __future__ import annotations

import json

import pytest

from infersweep.replay.events import pull_request_event
from infersweep.replay.sandbox import commit_files
from tests.integration.workflows.conftest import REPOSITORY, describe

pytestmark = pytest.mark.integration

WORKFLOW = ".github/workflows/run-sweep.yml"
CONFIG_KEY = "dsv4-fp4-mi355x-atom-disagg"
LABEL = "full-sweep-fail-fast"
ENTRY = f"""- config-keys:
    - {CONFIG_KEY}
  description:
    - "Replay test: run the disaggregated configuration again."
  pr-link: XXX
"""


def append_entry(repo) -> str:
    """The PR's head: one entry appended after one blank line, as the changelog's rules say."""
    text = (repo / "perf-changelog.yaml").read_text()
    return commit_files(repo, {"perf-changelog.yaml": text.rstrip("\n") + "\n\n" + ENTRY},
                        f"perf-changelog: {CONFIG_KEY} again")


def test_policy_decides_to_run_a_labeled_pr(worktree_repo, git_sandbox, replay, tmp_path):
    source, base_sha = worktree_repo
    head_sha = append_entry(source)
    pr = git_sandbox.pull_request(REPOSITORY, source, tmp_path / "clone", base_sha=base_sha,
                                  head_sha=head_sha, number=7, head_ref="changelog-entry")
    event = pull_request_event(repository=REPOSITORY, number=pr.number, head_sha=head_sha,
                               base_sha=base_sha, head_ref=pr.head_ref, label=LABEL,
                               title=f"Re-run {CONFIG_KEY}")

    run = replay(WORKFLOW, "pull_request", event, repo_dir=pr.clone, jobs="policy",
                 name="policy")

    assert run.ok, describe(run)
    assert run.log.results() == {"Run Sweep/Decide": "success"}, describe(run)
    outputs = run.log.job("policy").step("decide").outputs
    decision = json.loads(outputs["decision-json"])
    assert outputs["run"] == "true" and decision["run"] is True, decision
    assert decision["decision"] == "run"
    assert decision["primary-label"] == LABEL
    assert decision["fail-fast"] is True and decision["check-changelog"] is True
    # the checkout was of the PR's head, fetched from the sandbox, and the event's facts held
    assert decision["head-sha"] == head_sha and decision["base-sha"] == base_sha
    assert decision["pr-number"] == 7 and decision["fork"] is False
    checkout = run.log.job("policy").step("0").outputs
    assert checkout.get("commit") == head_sha
