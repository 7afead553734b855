"""Node.js for the report pages' script tests (templates/*-core.js run outside a browser).

Tests skip where no ``node`` is installed, and fail instead where CI requires the browser or
act (``.ci/run`` installs node for act), so a missing node is a CI defect, never a silent skip.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from tests import browser

REQUIRED = ("INFERSWEEP_REQUIRE_ACT", browser.REQUIRE_ENV)


def node() -> str:
    """The ``node`` executable, or the test skipped (failed where CI requires it)."""
    found = shutil.which("node")
    if found is None:
        if any(os.environ.get(e, "") not in ("", "0") for e in REQUIRED):
            pytest.fail(f"no node to run the pages' script tests, and {' or '.join(REQUIRED)} "
                        "is set")
        pytest.skip("no node")
    return found


def evaluate(prelude: str, body: str):
    """``body`` (a function body returning a value) run by node after ``prelude``; its value
    back through JSON."""
    script = f"{prelude}\nconsole.log(JSON.stringify((() => {{ {body} }})()));\n"
    proc = subprocess.run([node(), "-e", script], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)
