"""The results-store tests' stores, for the report built from a store: an empty SQLite file,
and a database of its own on a real PostgreSQL (skipped without one, unless
INFERSWEEP_REQUIRE_POSTGRES=1). Absent until the store is installed; the tests that use them
skip then."""

from __future__ import annotations

import contextlib

with contextlib.suppress(ImportError):
    from tests.integration.stage.conftest import pg_server, pg_url, store_url  # noqa: F401
