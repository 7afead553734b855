"""The setup job and rows whose recipe lives in srt-slurm (InferenceX's ``CONFIG_FILE``): with
`--fetch-srt-slurm` it fetches the pinned commit, only when a row needs it, and launches those
rows; a pin the remote lacks fails the setup job at once, saying so."""

from __future__ import annotations

import json
import subprocess

import pytest
import yaml

from tests.gitrepo import GitRepo, frozen_base_files
from tests.integration.test_changelog_gate import _append, _entry
from tests.unit.recipe import srtcheckout
from tests.unit.test_policy_commands import parse_github_output

pytestmark = pytest.mark.integration

KEY = "qwen3-fp8-mi355x-sglang-disagg"
CONFIG = f"""
{KEY}:
  image: lmsysorg/sglang:v0.5.9-rocm700-mi35x
  model: Qwen/Qwen3-32B
  model-prefix: qwen3
  precision: fp8
  framework: sglang-disagg
  runner: mi355x-disagg
  kv-p2p-transfer: mooncake
  multinode: true
  disagg: true
  scenarios:
    fixed-seq-len:
    - isl: 1024
      osl: 1024
      search-space:
      - conc-list: [4, 8]
        prefill: {{ num-worker: 1, tp: 8, ep: 1, dp-attn: false,
                   additional-settings: [CONFIG_FILE=recipes/qwen/plain.yaml] }}
        decode: {{ num-worker: 1, tp: 8, ep: 1, dp-attn: false }}
"""


def _git(*args, cwd):
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout.strip()


@pytest.fixture
def remote(tmp_path):
    """An srt-slurm remote whose one commit holds recipes/qwen/plain.yaml."""
    src = srtcheckout.make(tmp_path / "srt-slurm-src")
    _git("init", "-q", cwd=src)
    _git("-c", "user.name=t", "-c", "user.email=t@example.invalid", "add", "-A", cwd=src)
    _git("-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qm", "r",
         cwd=src)
    return src, _git("rev-parse", "HEAD", cwd=src)


def _repo(tmp_path, url: str, commit: str) -> GitRepo:
    files = frozen_base_files()
    files["configs/amd-master.yaml"] += CONFIG
    files["configs/runtimes.yaml"] = yaml.safe_dump({"runtimes": {"srt-slurm": {
        "description": "test remote", "repository": url, "commit": commit,
        "recipe-dialect": "v1", "mentions": ["srt-slurm"]}}})
    r = GitRepo(tmp_path / "repo")
    r.commit("base", files)
    r.git("checkout", "-q", "-b", "pr")
    _append(r, _entry(key=KEY))
    return r


def _matrix(run_cli, repo, tmp_path, monkeypatch, *extra):
    monkeypatch.setenv("GITHUB_OUTPUT", str(tmp_path / "out"))
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "summary.md"))
    return run_cli("changelog", "matrix", "--repo", repo.path, "--base-ref", "main",
                   "--head-ref", "HEAD", "--job-outputs", "--rows-out",
                   tmp_path / "rows.json", *extra)


def test_the_pinned_checkout_is_fetched_and_its_recipe_rows_launch(remote, tmp_path, run_cli,
                                                                   monkeypatch):
    src, commit = remote
    repo = _repo(tmp_path, f"file://{src}", commit)
    code, _, err = _matrix(run_cli, repo, tmp_path, monkeypatch)
    assert code == 0, err
    doc = json.loads((tmp_path / "rows.json").read_text())
    # without the fetch the row cannot be rendered: listed as not run, never fanned out
    (reason,) = [v["reason"] for v in doc["not-run"].values()]
    assert "no srt-slurm checkout was given" in reason
    (tmp_path / "rows.json").unlink()
    code, _, err = _matrix(run_cli, repo, tmp_path, monkeypatch, "--fetch-srt-slurm")
    assert code == 0, err
    assert f"srt-slurm {commit[:12]} fetched" in err
    doc = json.loads((tmp_path / "rows.json").read_text())
    assert doc.get("not-run", {}) == {}
    jobs = parse_github_output((tmp_path / "out").read_text())
    multi = json.loads(jobs["multi-1"])
    assert [doc["rows"][e["id"]]["conc"] for e in multi] == [[4, 8]]


def test_a_pin_the_remote_lacks_fails_the_setup_job(remote, tmp_path, run_cli, monkeypatch):
    src, _ = remote
    repo = _repo(tmp_path, f"file://{src}", "0" * 39 + "1")
    code, _, err = _matrix(run_cli, repo, tmp_path, monkeypatch, "--fetch-srt-slurm")
    assert code == 1
    assert "is not on" in err and "fix the pin" in err
    assert not (tmp_path / "rows.json").exists()


def test_nothing_is_fetched_when_every_recipe_is_ours(tmp_path, run_cli, monkeypatch):
    files = frozen_base_files()
    files["configs/runtimes.yaml"] = yaml.safe_dump({"runtimes": {"srt-slurm": {
        "description": "unreachable", "repository": "file:///nonexistent/srt-slurm",
        "commit": "0" * 39 + "1", "recipe-dialect": "v1", "mentions": ["srt-slurm"]}}})
    r = GitRepo(tmp_path / "repo")
    r.commit("base", files)
    r.git("checkout", "-q", "-b", "pr")
    _append(r, _entry())
    code, _, err = _matrix(run_cli, r, tmp_path, monkeypatch, "--fetch-srt-slurm")
    assert code == 0, err
    assert "fetched" not in err
