"""The results-store tests' stores, for the report built from a store: an empty SQLite file,
and a database of its own on a real PostgreSQL (skipped without one, unless
INFERSWEEP_REQUIRE_POSTGRES=1)."""

from tests.integration.store.conftest import pg_server, pg_url, store_url  # noqa: F401
