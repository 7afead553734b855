"""The staging flow's fixtures: the stores (from the store tests), the seed sweep, GitHub's double."""

from __future__ import annotations

import pytest

from tests.ghdouble import GitHubDouble
from tests.integration.store.conftest import (  # noqa: F401
    pg_server,
    pg_url,
    seed_sweep,
    store_url,
)


@pytest.fixture
def gh(monkeypatch):
    """The GitHub API double, with the token `infersweep stage` reads from the environment."""
    monkeypatch.setenv("GITHUB_TOKEN", "test-token")
    monkeypatch.delenv("GITHUB_OUTPUT", raising=False)
    with GitHubDouble() as double:
        yield double
