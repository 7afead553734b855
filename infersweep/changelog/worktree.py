"""The changelog gate and uncommitted work.

The gate judges commits (``--head-ref``, default in docs ``HEAD``), so an edit that is not
committed yet is invisible to it: a newcomer who appends an entry and runs the check is told
"no entries were appended", or "did you mean <another key>" for the key just added to the
catalog. :func:`uncommitted` finds such edits among the files the gate reads, so the command
can say so first; :func:`snapshot` turns the working tree into a commit (``--working-tree``)
without touching the index, the branch or the files, so it is judged exactly as a commit is.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from infersweep.changelog import gitrefs
from infersweep.config.catalog import CONFIG_DIR, MASTER_GLOB, RUNNERS_FILE
from infersweep.diagnostics import Diagnostic, InputError

RULE = "changelog-uncommitted"
_IDENTITY = {"GIT_AUTHOR_NAME": "infersweep", "GIT_AUTHOR_EMAIL": "infersweep@localhost",
             "GIT_COMMITTER_NAME": "infersweep", "GIT_COMMITTER_EMAIL": "infersweep@localhost"}


def judged_paths(changelog: str) -> list[str]:
    """Pathspecs of what the gate reads: the changelog and the catalog."""
    return [changelog, f"{CONFIG_DIR}/{MASTER_GLOB}", f"{CONFIG_DIR}/{RUNNERS_FILE}"]


def uncommitted(root: Path, changelog: str) -> list[str]:
    """Files the gate reads that differ from ``HEAD``: staged, unstaged or untracked."""
    proc = gitrefs.run(root, "status", "--porcelain=v1", "--untracked-files=all", "-z", "--",
                       *judged_paths(changelog))
    if proc.returncode:
        return []
    names = []
    items = iter(proc.stdout.split("\0"))
    for item in items:
        if len(item) > 3:
            names.append(item[3:])
            if item[0] in "RC":  # a rename or copy: the source path follows
                next(items, None)
    return sorted(set(names))


def at_head(root: Path, head_ref: str | None) -> bool:
    """Whether ``head_ref`` names the commit checked out (only then does the working tree
    matter to the user's check)."""
    if not head_ref:
        return False
    try:
        here = gitrefs.resolve(root, "HEAD")
        there = gitrefs.resolve(root, head_ref)
    except InputError:
        return False
    return here is not None and here == there


def note(root: Path, head_ref: str | None, changelog: str, *, error: bool) -> Diagnostic | None:
    """The diagnostic for uncommitted changes the check did not see, or None."""
    if not at_head(root, head_ref):
        return None
    files = uncommitted(root, changelog)
    if not files:
        return None
    shown = ", ".join(files[:4]) + (f" and {len(files) - 4} more" if len(files) > 4 else "")
    verb = "has" if len(files) == 1 else "have"
    if error:
        message = (f"{shown} {verb} uncommitted changes, which this check does not see: the "
                   "errors below are about the last commit, not your edits")
    else:
        message = f"{shown} {verb} uncommitted changes, which this check did not see"
    return Diagnostic(files[0], 0, 0, message,
                      f"commit them; the gate reads {head_ref}, not the working tree; or pass "
                      "--working-tree to check the files as they are", RULE)


def snapshot(root: Path, changelog: str) -> str:
    """A commit of ``HEAD`` with the working tree's version of the judged files (untracked
    ones included), built in a scratch index; nothing the user has is changed."""
    gitrefs.check_repo(root)
    head = gitrefs.resolve(root, "HEAD")
    if head is None:
        raise InputError(Diagnostic("<git>", 0, 0, "--working-tree needs a commit to build on, "
                                    "and HEAD has none yet", "commit the repository once",
                                    "git-ref"))
    with tempfile.TemporaryDirectory(prefix="infersweep-index-") as tmp:
        env = {"GIT_INDEX_FILE": os.path.join(tmp, "index"), **_IDENTITY}
        steps = [("read-tree", head)]
        specs = [p for p in judged_paths(changelog)
                 if _exists(root, p) or gitrefs.run(root, "ls-files", "--error-unmatch", "--",
                                                    p).returncode == 0]
        if specs:
            steps.append(("add", "-A", "--", *specs))
        for step in steps:
            proc = gitrefs.run(root, *step, env=env)
            if proc.returncode:
                raise _failed(step[0], proc)
        tree = gitrefs.run(root, "write-tree", env=env)
        if tree.returncode:
            raise _failed("write-tree", tree)
        commit = gitrefs.run(root, "commit-tree", tree.stdout.strip(), "-p", head, "-m",
                             "infersweep: the working tree, as judged by --working-tree",
                             env=env)
        if commit.returncode:
            raise _failed("commit-tree", commit)
    return commit.stdout.strip()


def _exists(root: Path, spec: str) -> bool:
    return any(root.glob(spec)) if any(c in spec for c in "*?[") else (root / spec).exists()


def _failed(step: str, proc) -> InputError:
    lines = [line for line in (proc.stderr or "").splitlines() if line.strip()]
    return InputError(Diagnostic("<git>", 0, 0, f"cannot snapshot the working tree: git {step} "
                                 f"failed: {lines[-1] if lines else proc.returncode}",
                                 "commit the changes and check HEAD instead", "git"))
