"""A guard: tests do not read the live catalog or changelog, except those marked for it.

A config pull request appends to ``configs/*-master.yaml`` and ``perf-changelog.yaml``; a test
that reads them (directly, through the CLI in-process, or by handing their paths to a
subprocess) would fail on a correct contribution. Tests use the frozen copies under
``tests/data/`` instead; the few that check the live files themselves are marked
``@pytest.mark.live_catalog``. The guard is a Python audit hook on ``open`` and on starting a
subprocess, so it sees every way a test can reach the files.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
MARK = "live_catalog"
_state = {"allowed": False, "paths": frozenset()}


def live_paths() -> frozenset[str]:
    """The live catalog and changelog, as absolute paths (resolved once per session)."""
    found = set((REPO / "configs").glob("*-master.yaml")) | {REPO / "perf-changelog.yaml"}
    return frozenset(str(p.resolve()) for p in found)


@functools.cache
def frozen_checkout() -> Path:
    """The repository with the frozen catalog and changelog: every other file is a link to
    the real one; the master configs, runners and changelog are the frozen copies."""
    root = Path(tempfile.mkdtemp(prefix="infersweep-frozen-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    for item in REPO.iterdir():
        if item.name not in ("configs", "perf-changelog.yaml"):
            (root / item.name).symlink_to(item)
    (root / "configs").mkdir()
    for item in (REPO / "configs").iterdir():
        if not item.name.endswith("-master.yaml") and item.name != "runners.yaml":
            (root / "configs" / item.name).symlink_to(item)
    freeze_tree(root)
    return root


@contextlib.contextmanager
def copying_the_repository():
    """Let a fixture copy the whole working tree (live files included); follow it with
    :func:`freeze_tree` so nothing a test runs reads the live catalog."""
    before, _state["allowed"] = _state["allowed"], True
    try:
        yield
    finally:
        _state["allowed"] = before


def freeze_tree(root: Path) -> None:
    """Put the frozen catalog, runners and changelog in place of the live ones in a copy of
    the repository at ``root``."""
    data = REPO / "tests" / "data"
    for item in Path(root, "configs").glob("*-master.yaml"):
        item.unlink()
    for item in (data / "catalog").glob("*.yaml"):
        shutil.copyfile(item, Path(root, "configs", item.name))
    shutil.copyfile(data / "changelog-base" / "perf-changelog.yaml",
                    Path(root, "perf-changelog.yaml"))


def _named(value) -> list[str]:
    if isinstance(value, (str, bytes, os.PathLike)):
        return [os.fsdecode(value)]
    if isinstance(value, (list, tuple)):
        return [n for v in value for n in _named(v)]
    return []


def _touches(names: list[str], absolute_only: bool = False) -> str | None:
    """The first of ``names`` that is a live file; a subprocess's arguments count only as
    absolute paths (a relative one may be meant for another folder, as with ``git -C``)."""
    for name in names:
        for part in name.split("="):  # --config-files=PATH
            if not part.endswith((".yaml", ".yml")) or (absolute_only
                                                        and not os.path.isabs(part)):
                continue
            if os.path.realpath(part) in _state["paths"]:
                return part
    return None


def _hook(event: str, args: tuple) -> None:
    if _state["allowed"] or not _state["paths"]:
        return
    if event == "open":
        hit = _touches(_named(args[0]))
    elif event == "subprocess.Popen":
        hit = _touches(_named(args[1]), absolute_only=True)
    else:
        return
    if hit is not None:
        raise RuntimeError(
            f"a test reached the live catalog or changelog ({hit}): a config pull request "
            "changes it. Use the frozen copies under tests/data/ (tests/data/catalog, "
            "tests/data/changelog-base), or mark a test that checks the live files "
            f"themselves @pytest.mark.{MARK}")


def install(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"{MARK}: the test reads the live catalog or changelog on purpose")
    _state["paths"] = live_paths()
    sys.addaudithook(_hook)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    _state["allowed"] = item.get_closest_marker(MARK) is not None
    try:
        yield
    finally:
        _state["allowed"] = False
