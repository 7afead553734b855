"""Every case of every bad-input corpus (tests/data/bad-input/*.yaml) fails cleanly: the
expected exit code and message, no traceback, nothing half-written. See tests/badinput.py."""

from __future__ import annotations

import pytest

from tests.badinput import SHARED, check_case, load_cases

CASES = load_cases()


@pytest.fixture
def run_inprocess(run_cli):
    def run(*args, cwd=None):
        try:
            return run_cli(*args, cwd=cwd)
        except BaseException as exc:  # an escaping exception is a traceback for the user
            if isinstance(exc, KeyboardInterrupt):
                raise
            pytest.fail(f"{type(exc).__name__} escaped the CLI: {exc}")

    return run


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_bad_input_fails_cleanly(case, tmp_path, run_inprocess, monkeypatch):
    if case.needs_shared and not SHARED.is_dir():
        pytest.skip("reference data (../shared) not present")
    check_case(case, tmp_path, run_inprocess, monkeypatch)
