"""Names and paths `infersweep replay` would turn into places outside its sandbox are
refused, with the option named, before anything runs."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from infersweep.cli import cli
from infersweep.replay.sandboxpaths import (
    SandboxPathError,
    repository_name,
    workflow_file,
    workflow_path,
)


@pytest.mark.parametrize("name", ["SemiAnalysisAI/srt-slurm", "acme/infersweep",
                                  "octo-org/.github", "a/b.c_d-e", "x1/repo.git"])
def test_github_names_pass(name):
    assert repository_name(name, "--repository") == name


@pytest.mark.parametrize("name", ["../octo", "../x", "octo", "a/b/c", "a/..", "a/.",
                                  "/abs/x", "-x/y", "a b/c", "a/$(id)", "a/", "/a", "..",
                                  "owner/na;me", "own\ner/x"])
def test_names_that_leave_the_sandbox_are_refused(name):
    with pytest.raises(SandboxPathError) as err:
        repository_name(name, "--mirror")
    assert err.value.message.startswith(f"--mirror {name!r}")
    assert "OWNER/REPO" in err.value.message


@pytest.mark.parametrize("path", ["../../../../etc/passwd", "/etc/passwd",
                                  ".github/workflows/../../../x.yml", "run-sweep.yml",
                                  ".github/workflows/sub/x.yml", ".github/workflows/x.txt",
                                  ".github/x.yml"])
def test_workflows_outside_the_workflows_folder_are_refused(path):
    with pytest.raises(SandboxPathError):
        workflow_path(path)


def test_a_workflow_linked_outside_the_repository_is_refused(tmp_path):
    clone = tmp_path / "clone"
    (clone / ".github" / "workflows").mkdir(parents=True)
    (tmp_path / "outside.yml").write_text("on: push\n")
    (clone / ".github" / "workflows" / "evil.yml").symlink_to(tmp_path / "outside.yml")
    (clone / ".github" / "workflows" / "ok.yml").write_text("on: push\n")
    with pytest.raises(SandboxPathError, match="outside the repository"):
        workflow_file(".github/workflows/evil.yml", clone)
    with pytest.raises(SandboxPathError, match="no workflow"):
        workflow_file(".github/workflows/missing.yml", clone)
    assert workflow_file("./.github/workflows/ok.yml", clone) == \
        (clone / ".github/workflows/ok.yml").resolve()


@pytest.mark.parametrize("args, said", [
    (["--repository", "../octo"], "--repository '../octo' is not OWNER/REPO"),
    (["--mirror", "../x=/tmp/x"], "--mirror '../x' is not OWNER/REPO"),
    (["--workflow", "../../../../etc/passwd"], "--workflow '../../../../etc/passwd' is not"),
])
def test_the_command_refuses_before_running(args, said, run_cli, monkeypatch, tmp_path):
    monkeypatch.setenv("INFERSWEEP_ACT", str(tmp_path / "no-act-needed"))
    code, out, err = run_cli("replay", *args, "--workdir", tmp_path / "w")
    assert code == 1, out + err
    assert said in err
    assert "Traceback" not in err
    assert not (tmp_path / "w").exists()


def test_help_says_the_heads_code_runs_here():
    out = CliRunner().invoke(cli, ["replay", "--help"]).output
    assert "run on this machine as you" in " ".join(out.split())
