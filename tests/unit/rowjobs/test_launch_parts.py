"""The launcher's parts that need no Slurm: srtctl's --json output, fleets, the checkout's
fetch by SHA (a real git repository), the job tag in the recipe, poll counting."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from infersweep.diagnostics import InputError
from infersweep.rowjobs import apply, checkout
from infersweep.rowjobs.fleet import fleet_name, get_fleet, load_fleets

REPO = Path(__file__).resolve().parents[3]
SUBMITTED = json.dumps({"status": "submitted", "slurm_job_id": "476798", "job_name": "x",
                        "output_dir": "/out/476798", "metadata_path": "/out/476798/476798.json",
                        "config_path": "r.yaml", "tags": None})


def test_one_submitted_line_is_the_job():
    sub = apply.parse(0, SUBMITTED + "\n", "prose on stderr\n")
    assert sub.job_id == "476798" and sub.output_dir == Path("/out/476798")


@pytest.mark.parametrize("rc, stdout, stderr, fragment, ids", [
    (1, '{"status": "error", "error": "{\'benchmark\': {\'bogus\': [\'Unknown field.\']}}"}\n',
     "", "Unknown field", []),
    (1, "", "FileNotFoundError: r.yaml\n", "printed no JSON line (exit 1)", []),
    (1, "", "Setup incomplete: configs/nats-server missing\n", "printed no JSON line", []),
    (0, '{"status": "no-submissions"}\n', "", "submitted nothing", []),
    (0, SUBMITTED + "\n" + SUBMITTED.replace("476798", "476799") + "\n", "",
     "2 submission(s)", ["476798", "476799"]),
    (1, SUBMITTED + "\n", "boom\n", "exited 1 after submitting job 476798", ["476798"]),
    (0, '{"status": "submitted"}\n', "", "no job id", []),
], ids=["error-line", "no-line-missing-file", "no-line-setup", "no-submissions",
        "more-than-one", "submitted-then-nonzero", "no-job-id"])
def test_every_other_srtctl_outcome_is_a_submit_error(rc, stdout, stderr, fragment, ids):
    with pytest.raises(apply.SubmitError) as exc:
        apply.parse(rc, stdout, stderr)
    assert fragment in str(exc.value.diagnostics[0])
    assert exc.value.submitted == ids  # what the caller must cancel by id


def test_shipped_fleets_and_runner_prefix():
    fleets = load_fleets(REPO / "configs" / "fleets.yaml")
    assert {"mi355x-amds", "local-slurm"} <= set(fleets)
    assert fleet_name("mi355x-amds_03") == "mi355x-amds"
    assert get_fleet(REPO / "configs" / "fleets.yaml", None, "local-slurm_00").name == "local-slurm"
    with pytest.raises(InputError, match="unknown fleet"):
        get_fleet(REPO / "configs" / "fleets.yaml", "nope", None)


def test_bundle_client_is_built_into_scratch_and_named_as_the_container_sees_it(tmp_path):
    fleet = load_fleets(REPO / "configs" / "fleets.yaml")["mi355x-amds"]
    command = fleet.client_command(REPO, tmp_path)
    python, path = command.split()
    assert python == "python3" and path.startswith("/infersweep-runs/bundles/infersweep-bench-")
    built = tmp_path / "bundles" / Path(path).name
    assert built.is_file()
    # the bundle is the client: it runs on this interpreter without the installed package
    proc = subprocess.run([sys.executable, "-I", str(built), "version"], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    before = built.stat().st_mtime_ns
    assert fleet.client_command(REPO, tmp_path) == command  # built once, re-used
    assert built.stat().st_mtime_ns == before


def test_bundle_client_needs_the_scratch_folder_in_the_container(tmp_path):
    fleet = replace(load_fleets(REPO / "configs" / "fleets.yaml")["mi355x-amds"],
                    scratch_in_container=None)
    with pytest.raises(InputError, match="set scratch-in-container"):
        fleet.client_command(REPO, tmp_path)


def test_job_env_is_built_not_inherited():
    fleet = load_fleets(REPO / "configs" / "fleets.yaml")["local-slurm"]
    env = fleet.job_env(REPO, {"HOME": "/h", "VIRTUAL_ENV": "/v", "PYTHONPYCACHEPREFIX": "/p",
                               "SLURM_CONF": "/s", "PATH": "/venv/bin:/usr/bin"})
    assert "VIRTUAL_ENV" not in env and "PYTHONPYCACHEPREFIX" not in env
    assert env["SLURM_CONF"] == "/s" and "/venv/bin" not in env["PATH"]


def _git(*args, cwd):
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout.strip()


@pytest.fixture
def remote(tmp_path):
    src = tmp_path / "remote"
    src.mkdir()
    _git("init", "-q", cwd=src)
    (src / "f").write_text("x")
    _git("add", "f", cwd=src)
    _git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "c", cwd=src)
    return src, _git("rev-parse", "HEAD", cwd=src)


def test_fetch_by_sha_checks_head(remote, tmp_path):
    src, sha = remote
    checkout.fetch(tmp_path / "co", f"file://{src}", sha)
    assert checkout.head(tmp_path / "co") == sha


def test_fetch_of_a_commit_the_remote_lacks_says_so(remote, tmp_path):
    src, _ = remote
    with pytest.raises(checkout.CheckoutError, match="is not on"):
        checkout.fetch(tmp_path / "co", f"file://{src}", "deadbeef" * 5)


def test_warm_entry_is_reused_without_git_fetch(remote, tmp_path):
    """A ready entry (HEAD == pin, srtctl present, ready.json) costs one rev-parse."""
    src, sha = remote
    root = tmp_path / "cache"
    entry = root / sha
    checkout.fetch(entry / "src", f"file://{src}", sha)
    (entry / "venv" / "bin").mkdir(parents=True)
    (entry / "venv" / "bin" / "srtctl").write_text("")
    (entry / checkout.READY).write_text("{}")
    fleet = load_fleets(REPO / "configs" / "fleets.yaml")["local-slurm"]
    co = checkout.ensure(sha, "file:///nonexistent", fleet, REPO, root=root)
    assert co.warm and co.src == entry / "src"

