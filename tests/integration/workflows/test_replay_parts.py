"""The replay's parts that need no act: the git sandbox standing in for github.com, the tool
cache's per-job environments, and the reading of act's --json log."""

from __future__ import annotations

import json
import os
import subprocess
import zipfile

import pytest

from infersweep.replay.actlog import ActLog
from infersweep.replay.sandbox import GitSandbox, commit_files, snapshot_worktree
from infersweep.replay.toolcache import python_toolcache

pytestmark = pytest.mark.integration

REPOSITORY = "acme/widgets"


def git(*args, env=None, cwd=None) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env={**os.environ, **(env or {})},
                          capture_output=True, text=True, check=True).stdout.strip()


@pytest.fixture
def pr(tmp_path):
    source = tmp_path / "source"
    git("init", "-q", str(source))
    (source / "a.txt").write_text("base\n")  # untracked: a snapshot takes it all the same
    base = snapshot_worktree(source, tmp_path / "repo")
    head = commit_files(tmp_path / "repo", {"a.txt": "head\n"}, "head")
    sandbox = GitSandbox(tmp_path / "github")
    return sandbox, sandbox.pull_request(REPOSITORY, tmp_path / "repo", tmp_path / "clone",
                                         base_sha=base, head_sha=head, number=3)


def test_the_clone_is_github_s_merge_commit_with_a_github_origin(pr):
    sandbox, request = pr
    clone = request.clone
    assert git("-C", clone, "remote", "get-url", "origin") == \
        f"https://github.com/{REPOSITORY}.git"
    assert git("-C", clone, "rev-parse", "HEAD") == request.merge_sha
    assert git("-C", clone, "rev-parse", "HEAD^1", "HEAD^2").split() == \
        [request.base_sha, request.head_sha]
    assert (clone / "a.txt").read_text() == "head\n"
    assert sandbox.bare(REPOSITORY) == sandbox.root / "acme" / "widgets.git"


def test_every_git_call_with_the_env_reaches_the_sandbox_by_sha(pr, tmp_path):
    sandbox, request = pr
    refs = git("ls-remote", f"https://github.com/{REPOSITORY}", env=sandbox.env())
    assert f"{request.merge_sha}\trefs/pull/3/merge" in refs
    assert f"{request.head_sha}\trefs/pull/3/head" in refs
    assert f"{request.base_sha}\trefs/heads/main" in refs
    # what actions/checkout does: an empty repository fetching one commit by SHA
    fresh = tmp_path / "fresh"
    git("init", "-q", str(fresh))
    git("-C", fresh, "remote", "add", "origin", f"https://github.com/{REPOSITORY}")
    for sha in (request.head_sha, request.merge_sha):
        git("-C", fresh, "fetch", "-q", "--depth=1", "origin", sha, env=sandbox.env())
        assert git("-C", fresh, "rev-parse", "FETCH_HEAD") == sha
    assert "GIT_CONFIG_COUNT" not in os.environ  # nothing leaked into this process


def probe_wheel(tmp_path):
    """A wheel of a package ``probe`` with a ``probe`` command, made by hand (nothing to
    build, nothing to download)."""
    wheel = tmp_path / "probe-1-py3-none-any.whl"
    files = {
        "probe/__init__.py": "def main():\n    print('probe')\n",
        "probe-1.dist-info/METADATA": "Metadata-Version: 2.1\nName: probe\nVersion: 1\n",
        "probe-1.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: test\n"
                                   "Root-Is-Purelib: true\nTag: py3-none-any\n",
        "probe-1.dist-info/entry_points.txt": "[console_scripts]\nprobe = probe:main\n",
    }
    with zipfile.ZipFile(wheel, "w") as zf:
        for name, text in files.items():
            zf.writestr(name, text)
        zf.writestr("probe-1.dist-info/RECORD",
                    "".join(f"{name},,\n" for name in [*files, "probe-1.dist-info/RECORD"]))
    return wheel


def test_each_job_installs_into_its_own_environment(tmp_path):
    """Two jobs (two RUNNER_TEMPs) and the base: a package one job installs is seen by that
    job only, and the job's later steps find its commands through GITHUB_PATH."""
    cache = python_toolcache(tmp_path / "toolcache")
    wheel = probe_wheel(tmp_path)
    bindir = cache.install_dir / "bin"
    jobs = []
    for n in (1, 2):
        temp = tmp_path / f"job{n}"
        temp.mkdir()
        jobs.append({"RUNNER_TEMP": str(temp), "GITHUB_PATH": str(temp / "path")})
    subprocess.run([bindir / "pip", "install", "-q", "--no-index", str(wheel)], env={**os.environ, **jobs[0]}, check=True, capture_output=True)
    probe = [bindir / "python", "-c", "import probe"]
    assert subprocess.run(probe, env={**os.environ, **jobs[0]}).returncode == 0
    assert subprocess.run(probe, env={**os.environ, **jobs[1]},
                          capture_output=True).returncode != 0
    base_env = {k: v for k, v in os.environ.items() if k != "RUNNER_TEMP"}
    assert subprocess.run(probe, env=base_env, capture_output=True).returncode != 0
    job_bin = (tmp_path / "job1" / "path").read_text().strip()
    assert (tmp_path / "job1" / "replay-python" / "bin" / "probe").is_file()
    assert job_bin == str(tmp_path / "job1" / "replay-python" / "bin")
    assert cache.install_dir.parent.joinpath("x64.complete").is_file()


def test_the_log_gives_results_outputs_and_annotations():
    lines = [
        {"job": "Run Sweep/Decide ", "jobID": "policy", "msg": "⭐ Run Set up job",
         "stepid": ["--setup-job"]},
        {"job": "Run Sweep/Decide ", "jobID": "policy", "stage": "Main", "stepID": ["decide"],
         "step": "infersweep policy decide", "command": "set-output", "name": "run",
         "arg": "true"},
        {"job": "Run Sweep/Decide ", "jobID": "policy", "stage": "Main", "stepID": ["decide"],
         "command": "error", "kvPairs": {"file": "perf-changelog.yaml", "line": "12"},
         "arg": "bad entry", "level": "error"},
        {"job": "Run Sweep/Decide ", "jobID": "policy", "stage": "Main", "stepID": ["decide"],
         "stepResult": "success"},
        {"job": "Run Sweep/Decide ", "jobID": "policy", "jobResult": "success"},
        {"job": "Run Sweep/Check", "jobID": "check", "jobResult": "skipped", "level": "debug"},
    ]
    log = ActLog()
    news = [log.feed(json.dumps(line)) for line in lines]
    assert log.feed("Error: Job 'x' failed") is None
    assert [n[0] for n in news if n] == ["started", "finished", "finished"]
    assert log.results() == {"Run Sweep/Decide": "success", "Run Sweep/Check": "skipped"}
    decide = log.job("policy")
    assert decide.step("decide").outputs == {"run": "true"}
    assert decide.step("decide").result == "success"
    (note,) = log.annotations
    assert (note.level, note.file, note.line, note.message) == \
        ("error", "perf-changelog.yaml", 12, "bad entry")
    assert log.job("Check").ran is False
    assert log.unparsed == ["Error: Job 'x' failed"]


def test_the_act_command_line(action_trees, python_tool_cache):
    from infersweep.replay.runner import TOKEN, act_command
    from tests.conftest import REPO

    cmd = act_command(".github/workflows/run-sweep.yml", "pull_request", "/e.json",
                      repo_dir=REPO, jobs="policy", runner_labels=["mi355x-disagg"],
                      artifact_dir="/a", artifact_port=4242, action_cache_dir="/c",
                      trees=action_trees, toolcache=python_tool_cache, fleet="local", act="act")
    pairs = {(flag, value) for flag, value in zip(cmd, cmd[1:], strict=False)}
    assert cmd[:2] == ["act", "pull_request"]
    for flag in ("--no-skip-checkout", "--action-offline-mode", "--json", "-v"):
        assert flag in cmd
    assert {("-j", "policy"), ("-P", "ubuntu-latest=-self-hosted"),
            ("-P", "mi355x-disagg=-self-hosted"), ("--artifact-server-addr", "127.0.0.1"),
            ("--artifact-server-port", "4242"), ("--env", "RUNNER_NAME=local_01"),
            ("-s", f"GITHUB_TOKEN={TOKEN}"),
            ("--env", f"RUNNER_TOOL_CACHE={python_tool_cache.root}")} <= pairs
    mapped = {value.split("=", 1)[0] for flag, value in pairs if flag == "--local-repository"}
    assert "actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683" in mapped
