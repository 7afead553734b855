"""`infersweep replay`, the command a user runs, end to end on one job: a branch of a local
repository replayed as a pull request into main, offline (--actions), through act."""

from __future__ import annotations

import subprocess
import sys

import pytest

from infersweep.replay.sandbox import commit_files
from tests.integration.workflows.sweep_pr import SEED, entry

pytestmark = pytest.mark.integration


def test_replay_runs_the_prs_policy_job(worktree_repo, action_tarballs, act_executable,
                                        python_tool_cache, replay_cache, tmp_path):
    source = tmp_path / "source"
    subprocess.run(["git", "clone", "-q", str(worktree_repo[0]), str(source)], check=True)
    base = worktree_repo[1]
    text = (source / "perf-changelog.yaml").read_text()
    head = commit_files(source, {"perf-changelog.yaml": text.rstrip("\n") + "\n\n" + entry()},
                        f"perf-changelog: {SEED} again")
    done = subprocess.run(
        [sys.executable, "-m", "infersweep", "replay", "--repo-dir", str(source),
         "--base", base, "--head", head, "--actions", str(action_tarballs), "--job", "policy",
         "--workdir", str(tmp_path / "replay"), "--cache-dir", str(replay_cache),
         "--timeout", "600"],
        capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    out = done.stdout
    assert f"pull request #1: {head[:12]} into main ({base[:12]})" in out
    assert "success  Run Sweep/Decide" in out, out
    assert "act exit code 0" in out
    assert (tmp_path / "replay" / "logs" / "act.jsonl").is_file()
