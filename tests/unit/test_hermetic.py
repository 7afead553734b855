"""The suite never sees the user's settings: a store URL, a GitHub token or runner variables
in the shell must not reach a test (it could read, or write into, the user's store)."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.conftest import REPO, user_variables

PLANTED = {"INFERSWEEP_DB_URL": "postgresql+psycopg://u:p@127.0.0.1:9/users-store",
           "INFERSWEEP_SITE_URL": "https://example.invalid/site",
           "GITHUB_TOKEN": "ghp_users_token", "GITHUB_STEP_SUMMARY": "/nonexistent/summary",
           "OPENAI_API_KEY": "sk-users-key"}


def test_no_user_variable_is_visible():
    # INFERSWEEP_DEBUG is the suite's own (tests/conftest.py sets it for every test)
    assert [v for v in user_variables(os.environ) if v != "INFERSWEEP_DEBUG"] == []


def test_the_harness_settings_are_kept():
    harness = {"INFERSWEEP_REQUIRE_SHARED": "1", "INFERSWEEP_TEST_PG_URL": "x",
               "INFERSWEEP_SLURM_DIR": "x", "INFERSWEEP_PG_DIR": "x"}
    assert user_variables({**harness, **PLANTED}) == sorted(PLANTED)


def test_a_shell_with_the_users_settings_runs_the_suite_clean():
    """A pytest run started from a shell that has them: the tests inside see none."""
    env = {**os.environ, **PLANTED}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         f"{__file__}::test_no_user_variable_is_visible"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 passed" in proc.stdout
