"""Reading a git repository at revisions (the gate judges commits; the working tree only as
a snapshot commit, see :mod:`infersweep.changelog.worktree`).

Every call goes through :func:`run`, which turns "git is not installed" and "this is not
a repository" into located errors. Revisions given by a user are resolved to commit ids
(after ``--end-of-options``) before anything else reads them, so no user text ever
reaches git as an option.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from infersweep import gitexec
from infersweep.diagnostics import Diagnostic, InputError

FULL_SHA = re.compile(r"^[0-9a-f]{40}$")
# never wait for a password prompt in CI: a fetch that needs credentials fails at once
_ENV = {"GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "", "LC_ALL": "C"}


def _error(message: str, hint: str = "", rule: str = "git") -> InputError:
    return InputError(Diagnostic("<git>", 0, 0, message, hint, rule))


def run(root: Path, *args: str, text: bool = True, timeout: float | None = None,
        env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    try:
        return gitexec.run(["-C", str(root), *args], text=text, timeout=timeout,
                           env={**os.environ, **_ENV, **(env or {})})
    except subprocess.TimeoutExpired:
        raise _error(f"git {args[0]} did not finish within {timeout:.0f} s",
                     "check the network connection to the remote") from None


def check_repo(root: Path) -> None:
    """Raise unless ``root`` is inside a git work tree or repository."""
    if not root.exists():
        raise _error(f"--repo '{root}' does not exist", "pass the repository's root folder",
                     "git-repo")
    proc = run(root, "rev-parse", "--git-dir")
    if proc.returncode:
        raise _error(f"--repo '{root.resolve()}' is not a git repository",
                     "run inside a clone of the repository, or pass its root with --repo",
                     "git-repo")


def resolve(root: Path, ref: str) -> str | None:
    """The full commit id of ``ref``, or None when this clone does not have it."""
    gitexec.check_revision(ref, "revision", "<git>")
    proc = run(root, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}")
    return proc.stdout.strip() if proc.returncode == 0 else None


def merge_base(root: Path, base: str, head: str) -> str | None:
    proc = run(root, "merge-base", "--end-of-options", base, head)
    return proc.stdout.strip() if proc.returncode == 0 else None


def is_shallow(root: Path) -> bool:
    return run(root, "rev-parse", "--is-shallow-repository").stdout.strip() == "true"


def remotes(root: Path) -> list[str]:
    return run(root, "remote").stdout.split()


def default_remote(root: Path) -> str | None:
    names = remotes(root)
    return "origin" if "origin" in names else (names[0] if names else None)


def short_refs(root: Path) -> list[str]:
    """Branches, remote-tracking branches and tags, as a user would type them."""
    proc = run(root, "for-each-ref", "--format=%(refname:short)",
               "refs/heads", "refs/remotes", "refs/tags")
    return [r for r in proc.stdout.split() if not r.endswith("/HEAD")]


def tracks(root: Path, remote: str, branch: str) -> bool:
    """Whether a plain ``git fetch <remote> <branch>`` updates ``<remote>/<branch>``.

    True when one of the remote's configured fetch refspecs maps the branch there (a
    ``git clone --single-branch`` or ``--depth`` clone maps only its own branch).
    """
    proc = run(root, "config", "--get-all", f"remote.{remote}.fetch")
    want_src, want_dst = f"refs/heads/{branch}", f"refs/remotes/{remote}/{branch}"
    for spec in proc.stdout.split():
        src, _, dst = spec.lstrip("+").partition(":")
        if src == want_src and dst == want_dst:
            return True
        if src.endswith("/*") and dst.endswith("/*") and want_src.startswith(src[:-1]) \
                and dst[:-1] + want_src[len(src) - 1:] == want_dst:
            return True
    return False


def remote_branches(root: Path, remote: str) -> list[str] | None:
    """Branch names on ``remote`` (asks the remote), or None when it cannot be reached."""
    proc = run(root, "ls-remote", "--heads", "--end-of-options", remote, timeout=60)
    if proc.returncode:
        return None
    return [line.split("refs/heads/", 1)[1] for line in proc.stdout.splitlines()
            if "refs/heads/" in line]


def fetch(root: Path, remote: str, specs: list[str], *options: str) -> str | None:
    """Run ``git fetch``; None on success, else git's last error line."""
    proc = run(root, "fetch", "--no-tags", "--quiet", *options, "--end-of-options", remote,
               *specs, timeout=600, env=gitexec.token_env())
    if proc.returncode == 0:
        return None
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    return lines[-1] if lines else f"git fetch exited {proc.returncode}"


def head_commit(root: Path) -> str | None:
    """The commit checked out in ``root`` (the one every job of a run checks out)."""
    return resolve(root, "HEAD")


def read_at(root: Path, commit: str, path: str) -> bytes | None:
    """Contents of ``path`` at ``commit``, or None when the file does not exist there."""
    proc = run(root, "show", "--end-of-options", f"{commit}:{path}", text=False)
    return proc.stdout if proc.returncode == 0 else None


def list_at(root: Path, commit: str, directory: str) -> list[str]:
    proc = run(root, "ls-tree", "--name-only", "--end-of-options", f"{commit}:{directory}")
    if proc.returncode:
        return []
    return [f"{directory}/{name}" for name in proc.stdout.split()]
