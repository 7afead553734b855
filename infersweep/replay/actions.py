"""Action trees for an offline act: tarballs unpacked once, the ``--local-repository`` flags
that point every ``uses:`` at them, and the check that every pinned commit has a tree.

A folder of tarballs named ``<action>@<commit>.tar.gz`` (``<action>@<commit>.partial.tar.gz``
for a tree that is known to be incomplete), each unpacking to one folder, stands for the
actions' repositories at those commits. act does not check that a pinned commit exists when it
is given a local tree, and GitHub fails a job whose action names a missing commit at "Set up
job": comparing the pins with the tarballs (:func:`check_pins`) is the only place a pin typo
shows before GitHub runs the workflow.
"""

from __future__ import annotations

import re
import shutil
import tarfile
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from infersweep.replay.locking import locked
from infersweep.replay.workflows import (
    FULL_SHA,
    REMOTE,
    Use,
    reachable_workflows,
    uses_in_file,
    uses_in_workflows,
    workflow_files,
)

TARBALL = re.compile(r"(?P<name>[\w.-]+?)@(?P<sha>[0-9a-f]{40})(?P<partial>\.partial)?\.tar\.gz")
DEFAULT_OWNER = "actions"  # the tarball names carry the action's name, not its owner
_DONE = ".replay-unpacked"


@dataclass(frozen=True)
class ActionTarball:
    path: Path
    repository: str  # owner/repo
    sha: str
    partial: bool

    @property
    def pin(self) -> str:
        return f"{self.repository}@{self.sha}"


def tarballs(actions_dir: str | Path, owner: str = DEFAULT_OWNER) -> list[ActionTarball]:
    """The action tarballs of a folder (other files are ignored)."""
    found = []
    for path in sorted(Path(actions_dir).iterdir()):
        m = TARBALL.fullmatch(path.name)
        if m:
            found.append(ActionTarball(path, f"{owner}/{m['name']}", m["sha"],
                                       bool(m["partial"])))
    return found


@dataclass
class ActionTrees:
    """Unpacked action trees by ``owner/repo@sha``; ``partial`` holds the pins of trees known
    to be incomplete (they are mapped all the same: a job using one fails where GitHub's
    would not, and says so)."""

    trees: dict[str, Path] = field(default_factory=dict)
    partial: set[str] = field(default_factory=set)

    def for_repository(self, repository: str) -> list[tuple[str, Path]]:
        return [(pin, path) for pin, path in self.trees.items()
                if pin.split("@", 1)[0].lower() == repository.lower()]


def unpack_actions(actions_dir: str | Path, cache_dir: str | Path,
                   owner: str = DEFAULT_OWNER) -> ActionTrees:
    """Each tarball of ``actions_dir`` unpacked once into ``cache_dir/<file name>/`` (later
    calls reuse it; a half-unpacked tree from an interrupted call is redone)."""
    cache_dir = Path(cache_dir).resolve()
    cache_dir.mkdir(parents=True, exist_ok=True)
    result = ActionTrees()
    with locked(cache_dir / ".replay-actions.lock"):
        for ball in tarballs(actions_dir, owner):
            dest = cache_dir / ball.path.name.removesuffix(".tar.gz")
            if not (dest / _DONE).is_file():
                _unpack(ball.path, dest)
            result.trees[ball.pin] = dest
            if ball.partial:
                result.partial.add(ball.pin)
    return result


def _unpack(tarball: Path, dest: Path) -> None:
    if dest.exists():
        shutil.rmtree(dest)
    with tempfile.TemporaryDirectory(dir=dest.parent) as tmp, tarfile.open(tarball) as tar:
        tar.extractall(tmp, filter="data")
        tops = list(Path(tmp).iterdir())
        # one folder named after the action; anything else is taken as the tree itself
        top = tops[0] if len(tops) == 1 and tops[0].is_dir() else Path(tmp)
        if top == Path(tmp):
            shutil.copytree(tmp, dest, symlinks=True)
        else:
            top.rename(dest)
    (dest / _DONE).write_text(tarball.name + "\n")


def _tree_for(ref: str, trees: ActionTrees) -> Path | None:
    """The tree standing for ``owner/repo@ref``: the exact commit, or for a ref that is not a
    commit (a tag such as ``v4``, used inside composite actions) the repository's only tree."""
    if ref in trees.trees:
        return trees.trees[ref]
    repository, _, version = ref.partition("@")
    if FULL_SHA.fullmatch(version):
        return None  # a commit with no tree: leave it unmapped, as GitHub would fail it
    candidates = trees.for_repository(repository)
    return candidates[0][1] if len(candidates) == 1 else None


def _composite_uses(tree: Path) -> list[Use]:
    for name in ("action.yml", "action.yaml"):
        if (tree / name).is_file():
            return uses_in_file(tree / name, name)
    return []


def local_repository_map(uses: Iterable[str], trees: ActionTrees) -> tuple[dict[str, Path],
                                                                            list[str]]:
    """({``owner/repo@ref``: tree}, refs with no tree) for the remote ``uses`` values given,
    and for those of the composite actions among the trees they reach."""
    mapped: dict[str, Path] = {}
    missing: list[str] = []
    todo = list(uses)
    while todo:
        text = todo.pop(0)
        m = REMOTE.fullmatch(text)
        if m is None:
            continue  # ./local action or workflow, docker://
        ref = f"{m['owner']}/{m['repo']}@{m['ref']}"
        if ref in mapped or ref in missing:
            continue
        tree = _tree_for(ref, trees)
        if tree is None:
            missing.append(ref)
            continue
        mapped[ref] = tree
        todo.extend(use.text for use in _composite_uses(tree))
    return mapped, missing


def workflow_uses(workflow: str | Path, repo_dir: str | Path) -> list[str]:
    """The ``uses`` values of every workflow file beside ``workflow`` and of the local
    workflows it calls."""
    workflow, repo_dir = Path(workflow), Path(repo_dir)
    if not workflow.is_absolute():
        workflow = repo_dir / workflow
    paths = list(dict.fromkeys([*reachable_workflows(workflow, repo_dir),
                                *workflow_files(workflow.parent)]))
    return [use.text for path in paths for use in uses_in_file(path, path.name)]


def local_repository_flags(mapped: dict[str, Path]) -> list[str]:
    """``--local-repository owner/repo@REF=DIR`` for each mapped ref."""
    flags: list[str] = []
    for ref, tree in sorted(mapped.items()):
        flags += ["--local-repository", f"{ref}={tree}"]
    return flags


# -- pins -------------------------------------------------------------------------------------

class Pin(NamedTuple):
    file: str
    line: int
    pin: str  # owner/repo@ref as written (a path inside the repository dropped)


def pins_in_workflows(directory: str | Path) -> list[Pin]:
    """Every remote ``uses:`` of the workflow files in ``directory``, in file and line order."""
    return [Pin(use.file, use.line, use.repository_ref)
            for use in uses_in_workflows(directory) if use.repository_ref]


@dataclass(frozen=True)
class PinCheck:
    """``status``: ``tree`` (a tarball holds that commit), ``partial`` (its tarball is known
    to be incomplete: it cannot run here), ``missing`` (no tarball holds that commit: a typo
    or an action nobody provided) or ``unpinned`` (a tag or branch, not a full commit SHA)."""

    file: str
    line: int
    pin: str
    status: str
    detail: str = ""

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.pin}: {self.status}" + (
            f" ({self.detail})" if self.detail else "")


def _nearest(sha: str, candidates: list[str]) -> str:
    """A note on the nearest tarball commit when it differs in a few characters."""
    best = None
    for other in candidates:
        diffs = [i for i, (a, b) in enumerate(zip(sha, other, strict=True)) if a != b]
        if best is None or len(diffs) < len(best[1]):
            best = (other, diffs)
    if best is None or len(best[1]) > 3:
        return ""
    where = ", ".join(f"position {i + 1}: '{sha[i]}' where the tarball has '{best[0][i]}'"
                      for i in best[1])
    return f"; the tarball's commit is {best[0]} ({where}): a typo?"


def check_pins(workflows_dir: str | Path, actions_dir: str | Path,
               owner: str = DEFAULT_OWNER) -> list[PinCheck]:
    """Each remote ``uses:`` of ``workflows_dir`` against the tarballs of ``actions_dir``."""
    balls = tarballs(actions_dir, owner)
    by_pin = {ball.pin: ball for ball in balls}
    checks = []
    for pin in pins_in_workflows(workflows_dir):
        repository, _, ref = pin.pin.partition("@")
        if not FULL_SHA.fullmatch(ref):
            checks.append(PinCheck(*pin, "unpinned", f"'{ref}' is not a full commit SHA"))
            continue
        ball = by_pin.get(pin.pin)
        if ball is not None:
            checks.append(PinCheck(*pin, "partial" if ball.partial else "tree",
                                   ball.path.name))
            continue
        same_repo = [b.sha for b in balls if b.repository.lower() == repository.lower()]
        detail = (f"no tarball of {repository} at {ref}" + _nearest(ref, same_repo)
                  if same_repo else f"no tarball of {repository} at all")
        checks.append(PinCheck(*pin, "missing", detail))
    return checks
