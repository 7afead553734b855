"""A PostgreSQL store that cannot be reached is named by the host and port libpq would use:
the URL's port, else its ``?port=`` option, else 5432 (never 5432 for another port)."""

from __future__ import annotations

import pytest

from infersweep.store.connect import resolve, unreachable


@pytest.mark.parametrize("url, where", [
    ("postgresql://u:pw@db.example:6543/results", "db.example:6543"),
    ("postgresql://u:pw@/results?host=/run/pg&port=6544", "/run/pg:6544"),
    ("postgresql://u:pw@db.example/results?port=6545", "db.example:6545"),
    ("postgresql://u:pw@db.example/results", "db.example:5432"),
])
def test_the_unreachable_servers_port_is_the_one_asked_for(url, where):
    err = unreachable(resolve(url), OSError("connection refused"))
    message = str(err.diagnostics[0])
    assert f"cannot connect to PostgreSQL at {where} " in message, message
    assert "pw" not in message
