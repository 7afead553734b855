"""Fixtures shared by the integration tests."""

from __future__ import annotations

import pytest

from tests.integration.simharness import Sim


@pytest.fixture
def sim():
    started = []

    def start(*args, cmd="serve"):
        s = Sim(*args, cmd=cmd)
        started.append(s)
        return s

    yield start
    for s in started:
        s.stop()
