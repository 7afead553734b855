"""The replay client's venv for tests that run it (agentx-harness: bin/aiperf, bin/python).

``INFERSWEEP_TEST_AGENTIC_CLIENT_VENV`` (set by ``make test``; the user's
``INFERSWEEP_AGENTIC_CLIENT_VENV`` otherwise) names it. Without it those tests skip, unless
``INFERSWEEP_REQUIRE_AGENTIC=1`` says the client must be there (then they fail). The variable
is read when this module is imported, at collection: the suite's hermetic fixture clears the
user's ``INFERSWEEP_*`` settings before any test runs.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

VENV_ENV = "INFERSWEEP_AGENTIC_CLIENT_VENV"
TEST_VENV_ENV = "INFERSWEEP_TEST_AGENTIC_CLIENT_VENV"  # the harness's: kept through the suite
REQUIRE_ENV = "INFERSWEEP_REQUIRE_AGENTIC"
_VENV = os.environ.get(TEST_VENV_ENV) or os.environ.get(VENV_ENV, "")
_REQUIRED = os.environ.get(REQUIRE_ENV) == "1"


def client_venv() -> Path:
    """The venv (skip, or fail when required, if it is not set or not a client venv)."""
    if not _VENV:
        reason = f"{VENV_ENV} is not set (a venv with the replay client, agentx-harness)"
    elif not (Path(_VENV) / "bin" / "aiperf").exists():
        reason = f"{VENV_ENV}={_VENV} has no bin/aiperf"
    else:
        return Path(_VENV)
    if _REQUIRED:
        pytest.fail(f"{reason}; {REQUIRE_ENV}=1 requires it")
    pytest.skip(reason)


def client_python() -> Path:
    return client_venv() / "bin" / "python"
