"""`infersweep replay`, the command a user runs, end to end on one job: a branch of a local
repository replayed as a pull request into main, offline (--actions), through act. The head
adds a step that prints its environment: it sees the dummy token and none of the secrets
planted in the user's environment, and no log holds them."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys

import pytest

from infersweep.replay.runner import TOKEN
from infersweep.replay.sandbox import commit_files
from tests.integration.workflows.sweep_pr import SEED, entry

pytestmark = pytest.mark.integration

PLANTED = {"GITHUB_TOKEN": "ghp_plantedplantedplantedplanted0000",
           "AWS_SECRET_ACCESS_KEY": "planted-aws-secret-7f3a",
           "INFERSWEEP_DB_URL": "postgresql://replay:planted-db-password@db.invalid/x"}
# a step of the head's policy job, before `decide`: its environment, base64 so act's masking
# of the token's value does not hide what the test reads
PROBE = """      - name: environment probe
        env:
          SEEN_TOKEN: ${{ secrets.GITHUB_TOKEN }}
        run: echo "probe-env:$(env | base64 -w0)"
"""


def _with_probe(workflow: str) -> str:
    anchor = "      - id: decide\n"
    assert workflow.count(anchor) == 1
    return workflow.replace(anchor, PROBE + anchor)


def _probed_environment(log_path) -> dict[str, str]:
    for line in log_path.read_text().splitlines():
        msg = json.loads(line).get("msg", "") if line.startswith("{") else ""
        if msg.startswith("probe-env:"):
            text = base64.b64decode(msg.removeprefix("probe-env:").strip()).decode()
            return dict(item.split("=", 1) for item in text.splitlines() if "=" in item)
    raise AssertionError(f"no probe-env line in {log_path}")


def test_replay_runs_the_prs_policy_job(worktree_repo, action_tarballs, act_executable,
                                        python_tool_cache, replay_cache, tmp_path):
    source = tmp_path / "source"
    subprocess.run(["git", "clone", "-q", str(worktree_repo[0]), str(source)], check=True)
    base = worktree_repo[1]
    text = (source / "perf-changelog.yaml").read_text()
    workflow = (source / ".github/workflows/run-sweep.yml").read_text()
    head = commit_files(source, {"perf-changelog.yaml": text.rstrip("\n") + "\n\n" + entry(),
                                 ".github/workflows/run-sweep.yml": _with_probe(workflow)},
                        f"perf-changelog: {SEED} again")
    done = subprocess.run(
        [sys.executable, "-m", "infersweep", "replay", "--repo-dir", str(source),
         "--base", base, "--head", head, "--actions", str(action_tarballs), "--job", "policy",
         "--workdir", str(tmp_path / "replay"), "--cache-dir", str(replay_cache),
         "--timeout", "600"],
        capture_output=True, text=True, timeout=900, env={**os.environ, **PLANTED})
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    out = done.stdout
    assert f"pull request #1: {head[:12]} into main ({base[:12]})" in out
    assert "success  Run Sweep/Decide" in out, out
    assert "act exit code 0" in out
    log_path = tmp_path / "replay" / "logs" / "act.jsonl"
    seen = _probed_environment(log_path)
    assert seen["SEEN_TOKEN"] == TOKEN
    assert seen.get("GITHUB_TOKEN", TOKEN) == TOKEN
    assert seen["HOME"].startswith(str(tmp_path / "replay"))
    everything = log_path.read_text() + done.stdout + done.stderr + json.dumps(seen)
    for name, value in PLANTED.items():
        assert value not in everything, f"{name} reached the replayed step or a log"
    assert "run on this machine as you" in " ".join(done.stderr.split())
