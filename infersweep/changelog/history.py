"""The commits a change is judged between, on any clone, including a shallow one.

CI checks out one commit by default (``fetch-depth: 1``): the base ref is then missing,
and even once fetched, the merge-base lies beyond the shallow boundary. Every failure
says exactly which command brings in what is missing (each hint is a command that works
on this clone); with ``fetch_missing`` the commands are run here instead: missing refs
are fetched one commit deep, then the history is deepened step by step until the
merge-base appears, and made complete as the last resort.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from infersweep.changelog import gitrefs
from infersweep.diagnostics import Diagnostic, InputError, did_you_mean

# an abbreviated commit id (git abbreviates to 7+); a digit keeps hex words like "decade" names
SHORT_SHA = re.compile(r"^(?=.*[0-9])[0-9a-f]{7,39}$")
DEEPEN_STEPS = (64, 512)  # then --unshallow
FETCH_OPTION = "--fetch-missing"


@dataclass(frozen=True)
class Range:
    base: str  # commit the base ref names
    head: str  # commit the head ref names
    merge_base: str  # what the head is judged against


def _error(message: str, hint: str, rule: str = "git-ref") -> InputError:
    return InputError(Diagnostic("<git>", 0, 0, message, hint, rule))


@dataclass(frozen=True)
class _Wanted:
    """How to fetch a ref that this clone lacks: from ``remote``, ``spec``, giving ``local``."""

    remote: str
    spec: str
    local: str  # the name to resolve once fetched
    command: str  # what a user would type
    branch: str = ""  # the remote's branch, when the ref names one


def _branch_wanted(root: Path, remote: str, branch: str) -> _Wanted:
    local = f"refs/remotes/{remote}/{branch}"
    spec = f"+refs/heads/{branch}:{local}"
    command = (f"git fetch {remote} {branch}" if gitrefs.tracks(root, remote, branch)
               else f"git fetch {remote} {spec}")
    return _Wanted(remote, spec, local, command, branch)


def _wanted(root: Path, ref: str) -> _Wanted | None:
    names = gitrefs.remotes(root)
    remote = gitrefs.default_remote(root)
    if gitrefs.FULL_SHA.match(ref):
        return _Wanted(remote, ref, ref, f"git fetch {remote} {ref}") if remote else None
    if SHORT_SHA.match(ref):  # an abbreviated commit id: a remote cannot be asked for it
        return None
    first, _, branch = ref.partition("/")
    if branch and first in names:
        return _branch_wanted(root, first, branch)
    if ref.startswith("refs/") or remote is None:
        return None
    return _branch_wanted(root, remote, ref)  # a bare name: fetched as <remote>/<name>


def _then(wanted: _Wanted, ref: str, option: str) -> str:
    short = wanted.local.removeprefix("refs/remotes/")
    return "" if short == ref or wanted.local == ref else f", then pass {option} {short}"


def _unknown(root: Path, ref: str, option: str, wanted: _Wanted | None,
             fetch_error: str | None = None) -> InputError:
    """The error for a ref this clone lacks, with a fetch command that works."""
    on_remote = False
    branches = None
    if wanted is not None and wanted.branch:
        branches = gitrefs.remote_branches(root, wanted.remote)
        on_remote = branches is not None and wanted.branch in branches
        if branches is not None and not on_remote:
            near = did_you_mean(wanted.branch, branches)
            hint = f"{wanted.remote} has no branch '{wanted.branch}'"
            if near:
                name = near.split("'")[1]
                right = _branch_wanted(root, wanted.remote, name)
                hint += (f"; did you mean '{name}'? (run `{right.command}`"
                         f"{_then(right, ref, option)})")
            return _error(f"unknown git revision '{ref}' ({option})", hint)
    if wanted is not None and fetch_error is None and gitrefs.resolve(root, wanted.local):
        short = wanted.local.removeprefix("refs/remotes/")
        return _error(f"unknown git revision '{ref}' ({option})", f"did you mean '{short}'?")
    if fetch_error is not None and wanted is not None:
        return _error(f"cannot fetch {option} '{ref}' from {wanted.remote}: {fetch_error}",
                      _credentials_hint(), "git-fetch")
    close = "" if on_remote else did_you_mean(ref, gitrefs.short_refs(root))
    hints = [close] if close else []
    if close and wanted is not None and wanted.branch and branches is None:
        # the remote could not be asked: a near local name is likelier than fetching a typo
        hints.append(f"{wanted.remote} could not be reached to check the name; if "
                     f"'{wanted.branch}' is right, run `{wanted.command}`")
    elif wanted is not None:
        hints.append(f"this clone does not have it: run `{wanted.command}`"
                     f"{_then(wanted, ref, option)}, or pass {FETCH_OPTION}")
    elif SHORT_SHA.match(ref):
        hints.append("an abbreviated commit id cannot be fetched: give the full 40 characters")
    elif gitrefs.default_remote(root) is None:
        hints.append("this clone has no remote to fetch it from; check the spelling")
    elif not close:
        hints.append("check the spelling")
    return _error(f"unknown git revision '{ref}' ({option})", "; ".join(hints))


def _credentials_hint() -> str:
    return ("is the remote reachable with this clone's credentials? in a workflow, check out "
            "with fetch-depth: 0 instead when the repository is private and credentials "
            "are not kept")


def _resolve(root: Path, ref: str, option: str, fetch_missing: bool, shallow: bool) -> str:
    if not ref or ref.startswith("-"):
        raise _error(f"{option} '{ref}' is not a git revision",
                     "name a branch, tag or commit id", "git-ref")
    commit = gitrefs.resolve(root, ref)
    if commit:
        return commit
    wanted = _wanted(root, ref)
    if not fetch_missing or wanted is None:
        raise _unknown(root, ref, option, wanted)
    failed = gitrefs.fetch(root, wanted.remote, [wanted.spec],
                           *(["--depth=1"] if shallow else []))
    commit = None if failed else gitrefs.resolve(root, wanted.local)
    if commit is None:
        raise _unknown(root, ref, option, wanted, failed or "nothing was fetched")
    return commit


def _deepen_hint(remote: str | None, base: str, head: str) -> str:
    if remote is None:
        return "this clone is shallow and has no remote to deepen from; clone the full history"
    return (f"run `git fetch --unshallow {remote} {head} {base}` (the whole history), "
            f"or pass {FETCH_OPTION} to deepen only as far as the merge-base")


def locate(root: Path, base_ref: str, head_ref: str, fetch_missing: bool = False) -> Range:
    """Resolve both refs and their merge-base, fetching what is missing when allowed."""
    gitrefs.check_repo(root)
    shallow = gitrefs.is_shallow(root)
    head = _resolve(root, head_ref, "--head-ref", fetch_missing, shallow)
    base = _resolve(root, base_ref, "--base-ref", fetch_missing, shallow)
    found = gitrefs.merge_base(root, base, head)
    if found:
        return Range(base, head, found)
    shallow = gitrefs.is_shallow(root)
    remote = gitrefs.default_remote(root)
    if not shallow:
        raise _error(f"'{base_ref}' and '{head_ref}' share no history",
                     "use the pull request's base branch as --base-ref")
    if not fetch_missing or remote is None:
        raise _error(f"this clone is shallow and does not reach the merge-base of "
                     f"'{base_ref}' and '{head_ref}'", _deepen_hint(remote, base, head),
                     "git-shallow")
    for step in DEEPEN_STEPS:
        failed = gitrefs.fetch(root, remote, [head, base], f"--deepen={step}")
        if failed:
            raise _error(f"cannot deepen this shallow clone from {remote}: {failed}",
                         _credentials_hint(), "git-fetch")
        found = gitrefs.merge_base(root, base, head)
        if found:
            return Range(base, head, found)
    if gitrefs.is_shallow(root):
        failed = gitrefs.fetch(root, remote, [head, base], "--unshallow")
        if failed:
            raise _error(f"cannot complete this shallow clone from {remote}: {failed}",
                         _credentials_hint(), "git-fetch")
    found = gitrefs.merge_base(root, base, head)
    if found:
        return Range(base, head, found)
    raise _error(f"'{base_ref}' and '{head_ref}' share no history",
                 "use the pull request's base branch as --base-ref")
