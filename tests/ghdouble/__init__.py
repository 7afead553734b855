"""A test double of GitHub's REST API (see :mod:`tests.ghdouble.server`)."""

from tests.ghdouble.server import GitHubDouble

__all__ = ["GitHubDouble"]
