"""The act and Slurm tests share one xdist worker (tests/conftest.py's groups).

xdist sends a group to one worker by a suffix of the node id; with a pytest whose node ids
cannot change (pytest-xdist#1386) the tests sharing the local Slurm and act's session
fixtures would run side by side without a word. This test says so instead.
"""

from __future__ import annotations

import pytest


def test_the_act_and_slurm_tests_run_on_one_worker(request):
    if not getattr(request.config.option, "loadgroup", False):
        pytest.skip("not run by pytest-xdist with --dist loadgroup")
    assert request.node.nodeid.endswith("@act-slurm"), (
        f"{request.node.nodeid}: --dist loadgroup did not group it; this pytest and "
        "pytest-xdist do not group together (pytest-xdist#1386): install the test extra's "
        "versions (pip install -e '.[test]')")
