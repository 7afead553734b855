"""Shared fixtures: paths to the repo and to the optional reference data beside it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from infersweep.cli import main

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
INFERENCEX = SHARED / "reference" / "inferencex"


def shared_absent(reason: str):
    """Skip a test whose reference data (../shared) is missing; fail it instead where the
    data is required (INFERSWEEP_REQUIRE_SHARED=1, as .ci/run sets unless told otherwise)."""
    if os.environ.get("INFERSWEEP_REQUIRE_SHARED") == "1":
        pytest.fail(f"{reason} (INFERSWEEP_REQUIRE_SHARED=1: the reference data must be there)")
    pytest.skip(reason)


@pytest.fixture(autouse=True)
def _debug_errors(monkeypatch):
    """Tests see an OSError that escapes a command as itself (and fail), never the one-line
    message ``main`` gives users as a last resort; see docs/troubleshooting.md."""
    monkeypatch.setenv("INFERSWEEP_DEBUG", "1")


@pytest.fixture
def repo_root() -> Path:
    return REPO


@pytest.fixture
def inferencex() -> Path:
    """InferenceX's reference configs; tests using it skip where the data is absent."""
    if not (INFERENCEX / "configs" / "amd-master.yaml").is_file():
        shared_absent("InferenceX reference data (../shared/reference/inferencex) not present")
    return INFERENCEX


@pytest.fixture
def run_cli(capsys, monkeypatch):
    """Run the CLI in-process; returns (exit code, stdout, stderr)."""

    def run(*args, cwd: Path | None = None):
        if cwd is not None:
            monkeypatch.chdir(cwd)
        code = 0
        try:
            main([str(a) for a in args])
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        out, err = capsys.readouterr()
        return code, out, err

    return run
