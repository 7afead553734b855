"""The PostgreSQL test fixture's rule: without a server the tests skip, unless
INFERSWEEP_REQUIRE_POSTGRES=1 (CI) makes that a failure."""

from __future__ import annotations

import pytest

from tests import pg


def test_missing_postgresql_skips_by_default(monkeypatch):
    monkeypatch.delenv(pg.REQUIRE_ENV, raising=False)
    with pytest.raises(pytest.skip.Exception, match="no binaries"):
        pg.unavailable("no binaries")


def test_missing_postgresql_fails_when_required(monkeypatch):
    monkeypatch.setenv(pg.REQUIRE_ENV, "1")
    with pytest.raises(pytest.fail.Exception, match="required .* but no binaries"):
        pg.unavailable("no binaries")
