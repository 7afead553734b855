"""Shared fixtures: paths to the repo and to the optional reference data beside it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from infersweep.cli import main
from tests import livecatalog
from tests.livecatalog import pytest_runtest_protocol  # noqa: F401 - the guard's hook

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
INFERENCEX = SHARED / "reference" / "inferencex"
# the frozen catalog: tests assert rows and counts on these, never on the live configs/ files
# (a config pull request changes those; tests/livecatalog.py keeps tests off them)
FROZEN_MASTER = REPO / "tests" / "data" / "catalog" / "amd-master.yaml"
FROZEN_RUNNERS = REPO / "tests" / "data" / "catalog" / "runners.yaml"


# the test harness's own settings (.ci/run, the local Slurm and PostgreSQL scripts): kept
HARNESS = ("INFERSWEEP_REQUIRE_", "INFERSWEEP_TEST_", "INFERSWEEP_SLURM_", "INFERSWEEP_PG_DIR")
USER_PREFIXES = ("INFERSWEEP_", "GITHUB_")
USER_NAMES = ("OPENAI_API_KEY",)


def user_variables(environ) -> list[str]:
    """The user's settings the tools read (a store, a token, GitHub's runner variables), which
    no test may see: the suite must not read or write the user's store, or post anywhere."""
    return sorted(k for k in environ
                  if (k.startswith(USER_PREFIXES) or k in USER_NAMES)
                  and not k.startswith(HARNESS))


def pytest_configure(config):
    livecatalog.install(config)


@pytest.fixture(scope="session", autouse=True)
def _hermetic_environment():
    """Clear the user's INFERSWEEP_*, GITHUB_* and OPENAI_API_KEY for the whole suite; the tests
    that exercise one set their own (monkeypatch, or a subprocess's env)."""
    with pytest.MonkeyPatch.context() as mp:
        for name in user_variables(os.environ):
            mp.delenv(name)
        yield


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
def frozen_repo() -> Path:
    """The repository with the frozen catalog and changelog in place of the live ones (for
    commands that read a catalog from ``--repo`` or the working directory)."""
    return livecatalog.frozen_checkout()


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


# Tests that share one session-wide resource run on one xdist worker (``--dist loadgroup``):
# the local Slurm cluster (its nodes and queue), and each folder's session fixtures (act's
# action trees and tool cache, the real engine, srtctl), which are built once per worker.
XDIST_GROUPS = {
    "tests/integration/slurm/": "act-slurm",  # the act tests share the cluster and fixtures
    "tests/integration/workflows/": "act-slurm",
    "tests/integration/engine/": "engine",
    "tests/integration/recipe_coverage/": "srtctl",
    "tests/integration/evals/": "evals",
    "tests/integration/store/": "store",
}


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the groups into node ids
def pytest_collection_modifyitems(config, items):
    for item in items:
        path = Path(str(item.path)).relative_to(REPO).as_posix()
        for prefix, group in XDIST_GROUPS.items():
            if path.startswith(prefix):
                item.add_marker(pytest.mark.xdist_group(group))
                break
