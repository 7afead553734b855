"""Reading files at git revisions (the gate judges refs, never the working tree)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from infersweep import gitexec
from infersweep.diagnostics import Diagnostic, InputError

EOO = gitexec.END_OF_OPTIONS  # refs come from options and payloads: never parsed as flags


def _git(root: Path, *args: str, text: bool = True) -> subprocess.CompletedProcess:
    return gitexec.run(["-C", str(root), *args], text=text)


def resolve(root: Path, ref: str) -> str:
    """The full commit id of ``ref``."""
    gitexec.check_revision(ref, "revision", "<git>")
    proc = _git(root, "rev-parse", "--verify", "--quiet", EOO, f"{ref}^{{commit}}")
    if proc.returncode:
        raise InputError(Diagnostic(
            "<git>", 0, 0, f"unknown git revision '{ref}'",
            f"fetch it first (git fetch origin {ref}) or check the spelling", "git-ref"))
    return proc.stdout.strip()


def merge_base(root: Path, base: str, head: str) -> str:
    proc = _git(root, "merge-base", EOO, base, head)
    if proc.returncode:
        raise InputError(Diagnostic(
            "<git>", 0, 0, f"'{base}' and '{head}' share no history",
            "use the pull request's base branch as --base-ref", "git-ref"))
    return proc.stdout.strip()


def read_at(root: Path, ref: str, path: str) -> bytes | None:
    """Contents of ``path`` at ``ref``, or None when the file does not exist there."""
    proc = _git(root, "show", EOO, f"{ref}:{path}", text=False)
    return proc.stdout if proc.returncode == 0 else None


def list_at(root: Path, ref: str, directory: str) -> list[str]:
    proc = _git(root, "ls-tree", "--name-only", EOO, f"{ref}:{directory}")
    if proc.returncode:
        return []
    return [f"{directory}/{name}" for name in proc.stdout.split()]
