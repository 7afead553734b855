"""Values from payloads and options reach git only as data, and a missing git is named — on
real repositories. Before, ``head.sha: "--output=<file>"`` made ``git log`` write that file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from infersweep import gitexec
from infersweep.changelog import gitrefs
from infersweep.diagnostics import InputError
from tests.gitrepo import GitRepo

pytestmark = pytest.mark.integration


@pytest.fixture
def repo(tmp_path) -> GitRepo:
    r = GitRepo(tmp_path / "repo")
    r.commit("first", {"a.txt": "a\n", "configs/b.yaml": "b: 1\n"})
    return r


def pr_event(head_sha: str, labels=("full-sweep-enabled",)) -> dict:
    return {"action": "synchronize", "number": 7,
            "pull_request": {"number": 7, "labels": [{"name": n} for n in labels],
                             "head": {"sha": head_sha, "ref": "f", "repo": {"full_name": "a/b"}},
                             "base": {"sha": "d" * 40, "ref": "main"}},
            "repository": {"full_name": "a/b", "default_branch": "main"}}


@pytest.fixture
def decide(tmp_path, run_cli, monkeypatch, repo):
    for var in ("GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY", "GITHUB_SHA", "GITHUB_EVENT_PATH",
                "GITHUB_EVENT_NAME", "INFERSWEEP_HEAD_COMMIT_MESSAGE"):
        monkeypatch.delenv(var, raising=False)

    def run(event):
        path = tmp_path / "event.json"
        path.write_text(json.dumps(event))
        return run_cli("policy", "decide", "--event-name", "pull_request", "--event-path", path,
                       "--repo-dir", repo.path, cwd=repo.path)

    return run


def test_head_sha_that_is_an_option_never_reaches_git(decide, repo, tmp_path):
    target = tmp_path / "written-by-git"
    code, out, err = decide(pr_event(f"--output={target}"))
    assert code == 1
    assert "event field 'pull_request.head.sha'" in err and "is not a full commit SHA" in err
    assert not target.exists()


def test_a_real_head_sha_still_reads_the_message(decide, repo):
    sha = repo.commit("tune things [skip-sweep]")
    code, out, err = decide(pr_event(sha))
    assert code == 0, err
    decision = json.loads(out)
    assert decision["head-commit-message-checked"] is True
    assert decision["decision"] == "skip" and decision["skip-sweep-marker"] is True


def test_git_missing_is_named_and_the_decision_still_made(decide, repo, monkeypatch, tmp_path):
    sha = repo.commit("tune things [skip-sweep]")
    monkeypatch.setenv("PATH", str(tmp_path / "no-git-here"))
    code, out, err = decide(pr_event(sha))
    assert code == 0
    assert "warning: git is not installed or not on PATH" in err
    assert json.loads(out)["head-commit-message-checked"] is False


@pytest.mark.parametrize("ref", ["--output=written-by-git", "-p", "main..HEAD", "a b", ""])
def test_gitrefs_refuses_revisions_that_are_not_revisions(repo, ref):
    with pytest.raises(InputError, match="is not a git revision"):
        gitrefs.resolve(repo.path, ref)
    assert not (repo.path / "written-by-git").exists()


def test_gitrefs_reads_after_end_of_options(repo):
    head = gitrefs.resolve(repo.path, "HEAD")
    assert gitrefs.merge_base(repo.path, head, head) == head
    assert gitrefs.read_at(repo.path, head, "a.txt") == b"a\n"
    assert gitrefs.list_at(repo.path, head, "configs") == ["configs/b.yaml"]


def test_gitrefs_without_git(repo, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path / "no-git-here"))
    with pytest.raises(gitexec.GitMissing, match="git is not installed or not on PATH"):
        gitrefs.resolve(repo.path, "HEAD")


@pytest.mark.parametrize(("value", "ok"), [
    ("origin/main", True), ("HEAD~1", True), ("abc123^{commit}", True), ("feature/x#2", True),
    ("0" * 40, True), ("--output=x", False), ("-", False), ("a..b", False), ("a:b", False),
    ("a\nb", False), ("tag ", False), ("", False), ("x.lock", False),
])
def test_is_revision(value, ok):
    assert gitexec.is_revision(value) is ok


def test_changelog_decision_refs_are_checked_before_git(run_cli, repo, tmp_path):
    target = Path(repo.path) / "written-by-git"
    decision = json.dumps({"diff-base": "main", "diff-head": f"--output={target}"})
    code, out, err = run_cli("changelog", "check", "--decision", decision, "--repo", repo.path,
                             cwd=repo.path)
    assert code == 1 and "is not a git revision" in err
    assert not target.exists()
