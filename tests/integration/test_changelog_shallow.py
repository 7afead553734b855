"""`changelog check|matrix` on the checkouts CI really makes: one commit deep, a merge ref.

A bare "origin" holds main and a pull request (with GitHub's refs/pull/N/head and
refs/pull/N/merge); clones use file:// URLs so that --depth is honoured. Every hint the
commands print must be a command that works: the tests run the hints literally until the
check passes. With --fetch-missing the commands fetch and deepen by themselves.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from pathlib import Path

import pytest

from tests.gitrepo import APPENDED_ENTRY as ENTRY
from tests.gitrepo import GitRepo, frozen_base_files

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True,
                          text=True).stdout.strip()


class Origin:
    """A bare origin: main moved on after the PR branched; the PR has three commits."""

    def __init__(self, tmp: Path):
        src = GitRepo(tmp / "src")
        files = frozen_base_files()
        src.commit("base", files)
        for i in range(3):
            src.commit(f"main history {i}", {"README.md": f"v{i}\n"})
        self.fork_point = git(src.path, "rev-parse", "HEAD")
        git(src.path, "checkout", "-q", "-b", "pr")
        src.commit("pr: docs", {"NOTES.md": "notes\n"})
        src.commit("pr: append", {"perf-changelog.yaml":
                                  (src.path / "perf-changelog.yaml").read_text() + ENTRY})
        self.head = src.commit("pr: more docs", {"NOTES.md": "more notes\n"})
        git(src.path, "checkout", "-q", "main")
        for i in range(2):  # main moves on: the base tip is not the merge-base
            src.commit(f"main after {i}", {"README.md": f"after {i}\n"})
        self.base = git(src.path, "rev-parse", "HEAD")
        self.path = tmp / "origin.git"
        subprocess.run(["git", "clone", "-q", "--bare", str(src.path), str(self.path)],
                       check=True)
        git(self.path, "update-ref", "refs/pull/1/head", self.head)
        tree = git(self.path, "rev-parse", f"{self.head}^{{tree}}")
        self.merge = git(self.path, "-c", "user.name=tests", "-c",
                         "user.email=tests@example.invalid", "commit-tree", "-p", self.base,
                         "-p", self.head, "-m", "Merge pr into main", tree)
        git(self.path, "update-ref", "refs/pull/1/merge", self.merge)
        self.url = f"file://{self.path}"


@pytest.fixture(scope="module")
def origin(tmp_path_factory) -> Origin:
    return Origin(tmp_path_factory.mktemp("origin"))


def _init(path: Path, url: str) -> Path:
    path.mkdir()
    git(path, "init", "-q")
    git(path, "remote", "add", "origin", url)
    return path


def checkout_head(origin: Origin, path: Path) -> Path:
    """actions/checkout with `ref: <head sha>` and the default fetch-depth: 1."""
    _init(path, origin.url)
    git(path, "fetch", "-q", "--no-tags", "--depth=1", "origin", origin.head)
    git(path, "checkout", "-q", "--detach", origin.head)
    return path


def checkout_merge_ref(origin: Origin, path: Path) -> Path:
    """actions/checkout's default on a pull_request event: refs/pull/1/merge, one deep."""
    _init(path, origin.url)
    git(path, "fetch", "-q", "--no-tags", "--depth=1", "origin",
        "+refs/pull/1/merge:refs/remotes/pull/1/merge")
    git(path, "checkout", "-q", "--detach", "refs/remotes/pull/1/merge")
    return path


def clone_depth_1(origin: Origin, path: Path) -> Path:
    """`git clone --depth 1 --branch pr` (a single-branch clone)."""
    subprocess.run(["git", "clone", "-q", "--depth", "1", "--branch", "pr", origin.url,
                    str(path)], check=True)
    return path


def base_shallow(origin: Origin, path: Path) -> Path:
    """The PR branch with its whole history, but main fetched one commit deep."""
    subprocess.run(["git", "clone", "-q", "--single-branch", "--branch", "pr", origin.url,
                    str(path)], check=True)
    git(path, "fetch", "-q", "--depth=1", "origin", "+refs/heads/main:refs/remotes/origin/main")
    return path


SHAPES = {"head-sha": checkout_head, "merge-ref": checkout_merge_ref,
          "clone-depth-1": clone_depth_1, "base-shallow": base_shallow}


def _refs(origin: Origin) -> list[str]:
    return ["--base-ref", "origin/main", "--head-ref", origin.head]


def _hinted_command(err: str) -> list[str]:
    commands = re.findall(r"`(git [^`]+)`", err)
    assert commands, f"no command to run in:\n{err}"
    return shlex.split(commands[0])


@pytest.mark.parametrize("shape", SHAPES)
def test_hints_are_commands_that_work(origin, tmp_path, run_cli, shape):
    clone = SHAPES[shape](origin, tmp_path / "clone")
    assert git(clone, "rev-parse", "--is-shallow-repository") == "true"
    for _ in range(4):
        code, out, err = run_cli("changelog", "check", "--repo", clone, *_refs(origin))
        if code == 0:
            break
        assert "Traceback" not in err
        assert "share no history" not in err  # the history is there, only not fetched
        assert "git fetch origin origin/" not in err
        command = _hinted_command(err)
        proc = subprocess.run(command, cwd=clone, capture_output=True, text=True)
        assert proc.returncode == 0, f"hinted `{shlex.join(command)}` failed: {proc.stderr}"
    assert code == 0, err
    assert "1 entry appended" in out


def _matrix(run_cli, clone, origin, *extra):
    code, out, err = run_cli("changelog", "matrix", "--repo", clone, *_refs(origin), *extra)
    assert code == 0, err
    return json.loads(out)


@pytest.fixture(scope="module")
def expected_rows(origin, tmp_path_factory):
    """The matrix on a full clone, which the shallow ones must reproduce."""
    from infersweep.changelog.change import load_change
    from infersweep.changelog.process import Modifiers, build_matrix

    full = tmp_path_factory.mktemp("full") / "clone"
    subprocess.run(["git", "clone", "-q", origin.url, str(full)], check=True)
    change = load_change(full, "origin/main", origin.head)
    assert change.base_commit == origin.fork_point
    return build_matrix(change, Modifiers(), full)


@pytest.mark.parametrize("shape", SHAPES)
def test_fetch_missing_makes_check_and_matrix_work(origin, tmp_path, run_cli, shape,
                                                   expected_rows):
    clone = SHAPES[shape](origin, tmp_path / "clone")
    code, out, err = run_cli("changelog", "check", "--repo", clone, *_refs(origin),
                             "--fetch-missing")
    assert code == 0, err
    assert f"since {origin.fork_point[:12]}" in out  # judged against the true merge-base
    result = _matrix(run_cli, clone, origin, "--fetch-missing")
    assert result == expected_rows
    # what was fetched gives git itself the same merge-base
    assert git(clone, "merge-base", origin.base, origin.head) == origin.fork_point


def test_push_shape_fetches_the_before_commit(origin, tmp_path, run_cli):
    """A push: base is the `before` commit id, absent from a one-commit-deep checkout."""
    clone = checkout_head(origin, tmp_path / "clone")
    code, _, err = run_cli("changelog", "check", "--repo", clone, "--base-ref",
                           origin.fork_point, "--head-ref", "HEAD")
    assert code == 1
    assert f"run `git fetch origin {origin.fork_point}`" in err
    code, out, err = run_cli("changelog", "check", "--repo", clone, "--base-ref",
                             origin.fork_point, "--head-ref", "HEAD", "--fetch-missing")
    assert code == 0, err


# -- bad input that needs a real repository: same assertions as tests/data/bad-input ----------

def _no_remote_shallow(origin: Origin, path: Path) -> Path:
    clone = clone_depth_1(origin, path)
    git(clone, "fetch", "-q", "--depth=1", "origin", "+refs/heads/main:refs/remotes/origin/main")
    git(clone, "remote", "remove", "origin")
    return clone


def _full_clone(origin: Origin, path: Path) -> Path:
    subprocess.run(["git", "clone", "-q", origin.url, str(path)], check=True)
    return path


def _without_remote(origin: Origin, path: Path) -> Path:
    clone = _full_clone(origin, path)
    git(clone, "remote", "remove", "origin")
    return clone


def _unrelated(origin: Origin, path: Path) -> Path:
    clone = _full_clone(origin, path)
    git(clone, "checkout", "-q", "--orphan", "other")
    git(clone, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q",
        "-m", "unrelated")
    return clone


def _bad_remote(origin: Origin, path: Path) -> Path:
    clone = clone_depth_1(origin, path)
    git(clone, "remote", "set-url", "origin", f"file://{path}/missing.git")
    return clone


def _not_a_repo(origin: Origin, path: Path) -> Path:
    path.mkdir()
    return path


def _missing(origin: Origin, path: Path) -> Path:
    return path / "nowhere"


GIT_CASES = [
    # id, clone, args (after --repo), exit, message fragment
    ("not-a-repo", _not_a_repo, ["--base-ref", "main", "--head-ref", "HEAD"], 1,
     "is not a git repository"),
    ("repo-missing", _missing, ["--base-ref", "main", "--head-ref", "HEAD"], 1,
     "does not exist"),
    ("typo-in-shallow-clone", clone_depth_1, ["--base-ref", "origin/mian", "--head-ref", "HEAD"],
     1, "origin has no branch 'mian'; did you mean 'main'? (run `git fetch origin "
        "+refs/heads/main:refs/remotes/origin/main`, then pass --base-ref origin/main)"),
    ("typo-in-full-clone", _full_clone, ["--base-ref", "origin/mian", "--head-ref", "HEAD"], 1,
     "did you mean 'main'? (run `git fetch origin main`, then pass --base-ref origin/main)"),
    ("local-name-for-remote-branch", _full_clone, ["--base-ref", "pr", "--head-ref", "HEAD"], 1,
     "did you mean 'origin/pr'?"),
    ("short-commit-id", _full_clone, ["--base-ref", "0123abc", "--head-ref", "HEAD"], 1,
     "give the full 40 characters"),
    ("no-remote-to-fetch-from", _without_remote, ["--base-ref", "upstream-main", "--head-ref",
                                                  "HEAD"], 1,
     "this clone has no remote to fetch it from"),
    ("option-as-ref", _full_clone, ["--base-ref=--output=x", "--head-ref", "HEAD"], 1,
     "'--output=x' is not a git revision"),
    ("unrelated-history", _unrelated, ["--base-ref", "origin/main", "--head-ref", "HEAD"], 1,
     "share no history"),
    ("shallow-without-remote", _no_remote_shallow,
     ["--base-ref", "origin/main", "--head-ref", "HEAD"], 1,
     "has no remote to deepen from"),
    ("shallow-without-base", clone_depth_1, ["--base-ref", "origin/main", "--head-ref", "HEAD"],
     1, "this clone does not have it: run `git fetch origin +refs/heads/main:refs/remotes/"
        "origin/main`, or pass --fetch-missing"),
    ("fetch-fails", _bad_remote,
     ["--base-ref", "origin/main", "--head-ref", "HEAD", "--fetch-missing"], 1,
     "cannot fetch --base-ref 'origin/main' from origin"),
]


@pytest.mark.parametrize(("case", "make", "args", "exit_code", "message"), GIT_CASES,
                         ids=[c[0] for c in GIT_CASES])
@pytest.mark.parametrize("command", ["check", "matrix"])
def test_git_bad_input(origin, tmp_path, run_cli, command, case, make, args, exit_code,
                       message):
    clone = make(origin, tmp_path / "clone")
    extra = ["--rows-out", tmp_path / "rows.json"] if command == "matrix" else []
    code, out, err = run_cli("changelog", command, "--repo", clone, *args, *extra)
    assert "Traceback" not in out + err
    assert code == exit_code, err
    assert message in err
    assert not (tmp_path / "rows.json").exists()


def test_git_missing_from_path(origin, tmp_path, run_cli, monkeypatch):
    clone = _full_clone(origin, tmp_path / "clone")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    code, _, err = run_cli("changelog", "check", "--repo", clone, "--base-ref", "origin/main",
                           "--head-ref", "HEAD")
    assert code == 1 and "git is not installed or not on PATH" in err
    assert "Traceback" not in err


def test_fetch_missing_deepens_only_as_far_as_needed(tmp_path, run_cli):
    """A long history: the merge-base is a few commits back, so the clone stays shallow."""
    src = GitRepo(tmp_path / "src")
    src.commit("base", frozen_base_files())
    for i in range(150):
        src.git("commit", "-q", "--allow-empty", "-m", f"history {i}")
    src.git("checkout", "-q", "-b", "pr")
    head = src.commit("append", {"perf-changelog.yaml":
                                 (src.path / "perf-changelog.yaml").read_text() + ENTRY})
    src.git("checkout", "-q", "main")
    src.commit("main moves on", {"README.md": "later\n"})
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--depth", "1", "--branch", "pr",
                    f"file://{src.path}", str(clone)], check=True)
    code, out, err = run_cli("changelog", "check", "--repo", clone, "--base-ref", "origin/main",
                             "--head-ref", head, "--fetch-missing")
    assert code == 0, err
    assert git(clone, "rev-parse", "--is-shallow-repository") == "true"
    assert int(git(clone, "rev-list", "--count", "--all")) < 150
