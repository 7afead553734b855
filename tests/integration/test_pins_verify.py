"""``infersweep pins verify`` against real git repositories used as remotes.

The remote is a bare repository configured like GitHub (any commit reachable from a branch
or tag can be fetched by SHA). Cases: a published tip, an older reachable commit, a commit
that was rebased away and garbage-collected, one that was never pushed, a short SHA, a
malformed SHA, a remote that does not exist, and one that never answers.
"""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from infersweep.cli import main
from infersweep.pins.lock import Pin
from infersweep.pins.verify import (
    MALFORMED,
    NOT_FOUND,
    OK,
    SHORT,
    SKIPPED,
    UNREACHABLE,
    resolve_url,
    url_env_name,
    verify_pin,
)

pytestmark = pytest.mark.integration


@pytest.fixture(autouse=True)
def _no_actions_summary(monkeypatch):
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)  # when the suite runs in Actions
    for var in [v for v in os.environ if v.startswith("INFERSWEEP_PIN_URL_")]:
        monkeypatch.delenv(var)


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, text=True,
                          check=True)
    return done.stdout.strip()


def commit(repo: Path, message: str) -> str:
    (repo / "file.txt").write_text(message + "\n")
    git(repo, "add", "file.txt")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


@dataclass
class Remote:
    url: str  # file:// URL of the bare repository
    path: Path
    tip: str  # main's tip
    older: str  # reachable from main, not a tip
    tagged: str  # only reachable from a tag
    rebased_away: str  # was pushed, then force-pushed over and garbage-collected
    unpushed: str  # exists only in the author's clone


@pytest.fixture(scope="module")
def remote(tmp_path_factory) -> Remote:
    base = tmp_path_factory.mktemp("remote")
    env_patch = pytest.MonkeyPatch()
    for key, value in {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
                       "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid",
                       "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}.items():
        env_patch.setenv(key, value)
    work, bare = base / "work", base / "srt-slurm.git"
    work.mkdir()
    git(work, "init", "-q", "-b", "main")
    older = commit(work, "one")
    tip = commit(work, "two")
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(bare)], check=True)
    # GitHub serves any commit reachable from a ref by SHA, whatever the protocol version.
    git(bare, "config", "uploadpack.allowReachableSHA1InWant", "true")
    git(work, "push", "-q", str(bare), "main")

    git(work, "checkout", "-q", "-b", "release", older)
    tagged = commit(work, "release fix")
    git(work, "tag", "runtime-pin")
    git(work, "push", "-q", str(bare), "refs/tags/runtime-pin")

    git(work, "checkout", "-q", "-b", "feature", tip)
    rebased_away = commit(work, "feature v1")
    git(work, "push", "-q", str(bare), "feature")
    git(work, "commit", "-q", "--amend", "-m", "feature v2")
    git(work, "push", "-q", "-f", str(bare), "feature")
    git(bare, "reflog", "expire", "--expire=now", "--all")
    git(bare, "gc", "-q", "--prune=now")
    gone = subprocess.run(["git", "-C", str(bare), "cat-file", "-e", rebased_away],
                          capture_output=True)
    assert gone.returncode != 0, "the rebased-away commit must be gone from the remote"

    unpushed = commit(work, "local only")
    yield Remote(bare.as_uri(), bare, tip, older, tagged, rebased_away, unpushed)
    env_patch.undo()


def pin(sha: str, url: str = "https://example.invalid/srt-slurm", **kw) -> Pin:
    return Pin(name="srt-slurm", repository=url, commit=sha, recipe_dialect="v1", line=5,
               col=13, **kw)


# -- verify_pin ---------------------------------------------------------------------------------

@pytest.mark.parametrize("which", ["tip", "older", "tagged"])
def test_published_commits_are_fetchable(remote, which):
    sha = getattr(remote, which)
    result = verify_pin(pin(sha), remote.url, timeout=30)
    assert result.status == OK, result.message
    assert result.ok and result.repository == remote.url


def test_plain_path_remote_works_too(remote):
    assert verify_pin(pin(remote.tip), str(remote.path), timeout=30).status == OK


def test_rebased_away_commit_is_not_found(remote):
    result = verify_pin(pin(remote.rebased_away), remote.url, timeout=30)
    assert result.status == NOT_FOUND and not result.ok
    assert result.message.startswith(
        "commit not found on remote (rebased away or unpublished?)")
    assert remote.rebased_away in result.message


def test_never_pushed_commit_is_not_found(remote):
    result = verify_pin(pin(remote.unpushed), remote.url, timeout=30)
    assert result.status == NOT_FOUND


def test_short_sha_fails_without_touching_the_network(remote):
    result = verify_pin(pin(remote.tip[:7]), "file:///nonexistent/never/used", timeout=30)
    assert result.status == SHORT and result.message.startswith("short sha:")
    assert result.seconds < 1


def test_malformed_sha(remote):
    result = verify_pin(pin("release-2026"), remote.url, timeout=30)
    assert result.status == MALFORMED and result.message.startswith("malformed sha:")


def test_unreachable_remote(tmp_path):
    missing = (tmp_path / "no-such-repo.git").as_uri()
    result = verify_pin(pin("a" * 40), missing, timeout=30)
    assert result.status == UNREACHABLE
    assert result.message.startswith(f"remote unreachable: {missing}:")


def test_a_directory_that_is_not_a_repository_is_unreachable(tmp_path):
    (tmp_path / "empty").mkdir()
    result = verify_pin(pin("a" * 40), str(tmp_path / "empty"), timeout=30)
    assert result.status == UNREACHABLE
    assert "fatal:" in result.message  # git's own reason is kept


def test_a_remote_that_never_answers_times_out(monkeypatch, tmp_path):
    hang = tmp_path / "hanging-ssh"
    hang.write_text("#!/bin/sh\nsleep 30\n")
    hang.chmod(0o755)
    monkeypatch.setenv("GIT_SSH_COMMAND", str(hang))
    started = time.monotonic()
    result = verify_pin(pin("a" * 40), "ssh://git@example.invalid/srt-slurm.git", timeout=1.5)
    assert result.status == UNREACHABLE and "no answer within 1.5 s" in result.message
    assert time.monotonic() - started < 10  # the hung transport was killed


def test_verify_false_is_skipped():
    result = verify_pin(pin("a" * 40, verify=False), "file:///nonexistent", timeout=5)
    assert result.status == SKIPPED and result.ok


def test_url_overrides():
    p = pin("a" * 40)
    assert url_env_name("srt-slurm") == "INFERSWEEP_PIN_URL_SRT_SLURM"
    assert resolve_url(p, {}, {}) == p.repository
    assert resolve_url(p, {}, {"INFERSWEEP_PIN_URL_SRT_SLURM": "file:///m"}) == "file:///m"
    assert resolve_url(p, {"srt-slurm": "file:///f"},
                       {"INFERSWEEP_PIN_URL_SRT_SLURM": "file:///m"}) == "file:///f"


# -- the command ------------------------------------------------------------------------------

def write_lock(tmp_path: Path, srt: str, atom: str) -> Path:
    path = tmp_path / "runtimes.yaml"
    path.write_text(textwrap.dedent(f"""\
        runtimes:
          srt-slurm:
            repository: https://example.invalid/srt-slurm
            commit: "{srt}"
            recipe-dialect: v2
          atom:
            repository: https://example.invalid/ATOM
            commit: "{atom}"
        """))
    return path


def run(args) -> int:
    try:
        main(["pins", "verify", *args])
    except SystemExit as exc:
        return exc.code
    return 0


def test_cli_all_pins_fetchable(remote, tmp_path, capsys, monkeypatch):
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    lock = write_lock(tmp_path, remote.tip, remote.tagged)
    code = run(["--lock", str(lock), "--remote", f"srt-slurm={remote.url}",
                "--remote", f"atom={remote.url}", "--timeout", "30"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "pins verify: 2 of 2 pinned commits fetchable" in out
    assert f"ok    srt-slurm    {remote.tip[:12]}" in out
    assert f"| `srt-slurm` | `{remote.tip}` | {remote.url} | ✅ fetchable |" in summary.read_text()


def test_cli_reports_each_failure_at_its_lock_line(remote, tmp_path, capsys):
    lock = write_lock(tmp_path, remote.rebased_away, remote.tip[:9])
    code = run(["--lock", str(lock), "--remote", f"srt-slurm={remote.url}",
                "--remote", f"atom={remote.url}", "--timeout", "30"])
    err = capsys.readouterr().err
    assert code == 1
    assert (f"{lock}:4:13: [pin-commit-not-found] srt-slurm: commit not found on remote "
            "(rebased away or unpublished?)") in err
    assert "an immutable tag" in err  # the hint says what to do
    assert f"{lock}:8:13: [pin-short-sha] atom: short sha:" in err
    assert "2 errors" in err and "Traceback" not in err


@pytest.mark.parametrize("as_json", [["--format", "json"], ["--json"]])  # --json: old spelling
def test_cli_env_override_json_and_only(remote, tmp_path, capsys, monkeypatch, as_json):
    lock = write_lock(tmp_path, remote.older, "b" * 40)
    monkeypatch.setenv("INFERSWEEP_PIN_URL_SRT_SLURM", remote.url)
    code = run(["--lock", str(lock), "--only", "srt-slurm", *as_json])
    assert code == 0
    [result] = json.loads(capsys.readouterr().out)
    assert result["status"] == "ok" and result["repository"] == remote.url


def test_cli_unreachable_remote(tmp_path, capsys):
    lock = write_lock(tmp_path, "c" * 40, "d" * 40)
    missing = (tmp_path / "gone.git").as_uri()
    code = run(["--lock", str(lock), "--only", "srt-slurm",
                "--remote", f"srt-slurm={missing}"])
    assert code == 1
    assert f"srt-slurm: remote unreachable: {missing}" in capsys.readouterr().err


def test_cli_rejects_unknown_pin_names(tmp_path, capsys):
    lock = write_lock(tmp_path, "c" * 40, "d" * 40)
    assert run(["--lock", str(lock), "--only", "srt_slurm"]) == 1
    assert "did you mean 'srt-slurm'?" in capsys.readouterr().err


# -- secrets and arguments ----------------------------------------------------------------------

SECRET = "s3cret-token-value"
# a closed port: git fails at once, after it and we have both had a chance to print the URL
CRED_URL = f"https://ci-bot:{SECRET}@127.0.0.1:9/srt-slurm.git"


@pytest.mark.parametrize("route", ["lock", "--remote", "env"])
def test_credentials_in_the_url_are_never_printed(tmp_path, capsys, monkeypatch, route):
    lock = write_lock(tmp_path, "c" * 40, "d" * 40)
    args = ["--lock", str(lock), "--only", "srt-slurm", "--timeout", "30"]
    if route == "lock":
        lock.write_text(lock.read_text().replace("https://example.invalid/srt-slurm", CRED_URL))
    elif route == "--remote":
        args += ["--remote", f"srt-slurm={CRED_URL}"]
    else:
        monkeypatch.setenv("INFERSWEEP_PIN_URL_SRT_SLURM", CRED_URL)
    summary = tmp_path / "summary.md"
    assert run([*args, "--step-summary", str(summary)]) == 1
    text = capsys.readouterr()
    assert run([*args, "--json"]) == 1
    as_json = capsys.readouterr()
    for where, output in [("stdout", text.out), ("stderr", text.err), ("--json", as_json.out),
                          ("--json stderr", as_json.err), ("summary", summary.read_text())]:
        assert SECRET not in output, f"{where} shows the credential:\n{output}"
        assert "https://***@127.0.0.1:9/srt-slurm.git" in output, f"{where}:\n{output}"
    [result] = json.loads(as_json.out)
    assert result["repository"] == "https://***@127.0.0.1:9/srt-slurm.git"


def test_a_url_that_is_an_option_never_reaches_git(tmp_path, capsys):
    lock = write_lock(tmp_path, "c" * 40, "d" * 40)
    marker = tmp_path / "written-by-git"
    code = run(["--lock", str(lock), "--only", "srt-slurm",
                "--remote", f"srt-slurm=--upload-pack=touch {marker}"])
    assert code == 1
    assert "not a repository URL" in capsys.readouterr().err
    assert not marker.exists()


def test_ext_transport_urls_do_not_run_commands(tmp_path, capsys):
    lock = write_lock(tmp_path, "c" * 40, "d" * 40)
    marker = tmp_path / "written-by-ext"
    code = run(["--lock", str(lock), "--only", "srt-slurm",
                "--remote", f"srt-slurm=ext::sh -c touch% {marker}"])
    assert code == 1
    assert not marker.exists()


def test_git_missing(tmp_path, capsys, monkeypatch):
    lock = write_lock(tmp_path, "c" * 40, "d" * 40)
    monkeypatch.setenv("PATH", str(tmp_path / "no-git-here"))
    assert run(["--lock", str(lock)]) == 1
    err = capsys.readouterr().err
    assert "git is not installed or not on PATH" in err and "Traceback" not in err


def test_a_lock_problem_quoting_the_url_is_redacted(tmp_path, capsys):
    lock = write_lock(tmp_path, "c" * 40, "d" * 40)
    lock.write_text(lock.read_text().replace("https://example.invalid/srt-slurm",
                                             f"http://ci-bot:{SECRET}@example.invalid/x"))
    assert run(["--lock", str(lock)]) == 1
    err = capsys.readouterr().err
    assert "[schema]" in err and SECRET not in err and "http://***@example.invalid/x" in err


def test_sigterm_stops_git_and_removes_the_scratch_repositories(tmp_path):
    """A supervisor signals only the main PID: git (in its own session) and its transport
    must stop too, and no scratch repository may be left in the temporary folder."""
    import signal
    import sys

    hang = tmp_path / "hanging-ssh"
    hang.write_text("#!/bin/sh\necho started >> \"$0.log\"\nsleep 67.25\n")
    hang.chmod(0o755)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    lock = write_lock(tmp_path, "c" * 40, "d" * 40)
    env = {**os.environ, "GIT_SSH_COMMAND": str(hang), "TMPDIR": str(scratch)}
    env.pop("GITHUB_STEP_SUMMARY", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "infersweep", "pins", "verify", "--lock", str(lock),
         "--remote", "srt-slurm=ssh://git@example.invalid/a.git",
         "--remote", "atom=ssh://git@example.invalid/b.git", "--timeout", "120"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    log = Path(f"{hang}.log")
    end = time.monotonic() + 30
    while (not log.exists() or log.read_text().count("started") < 2) and time.monotonic() < end:
        time.sleep(0.05)
    assert log.exists(), "git never reached the transport"
    started = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=20)
    assert time.monotonic() - started < 10
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert "Traceback" not in err
    time.sleep(0.5)  # SIGKILLed process groups are gone by now
    left = [d.name for d in Path("/proc").iterdir() if d.name.isdigit()
            and (str(hang).encode() in _cmdline(d) or b"67.25" in _cmdline(d))]
    assert not left, f"transport processes left: {left}"
    assert not list(scratch.iterdir()), list(scratch.iterdir())


def _cmdline(proc_dir: Path) -> bytes:
    try:
        return (proc_dir / "cmdline").read_bytes()
    except OSError:
        return b""
