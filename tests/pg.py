"""A real PostgreSQL for the results-store tests: the server `scripts/postgres-local` starts.

``INFERSWEEP_TEST_PG_URL`` names a running one (``.ci/run`` starts it once); otherwise the
session starts its own in a temporary folder and stops it at the end. Without PostgreSQL
binaries the tests that need it skip, unless ``INFERSWEEP_REQUIRE_POSTGRES=1`` (CI) makes
that a failure. Each test gets a database of its own, dropped afterwards.
"""

from __future__ import annotations

import glob
import os
import secrets
import subprocess
from pathlib import Path

import pytest
import sqlalchemy as sa

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "scripts" / "postgres-local"
URL_ENV = "INFERSWEEP_TEST_PG_URL"
REQUIRE_ENV = "INFERSWEEP_REQUIRE_POSTGRES"


def binaries_present() -> bool:
    return any(os.access(p, os.X_OK) for p in glob.glob("/usr/lib/postgresql/*/bin/initdb"))


def unavailable(why: str):
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"PostgreSQL is required ({REQUIRE_ENV}=1) but {why}")
    pytest.skip(f"PostgreSQL: {why}")


class Server:
    """The running server, and a fresh database on it per call of :meth:`database`."""

    def __init__(self, url: str, folder: Path | None):
        self.url = url
        self.folder = folder

    def admin(self) -> sa.Engine:
        return sa.create_engine(self.url, isolation_level="AUTOCOMMIT")

    def database(self) -> str:
        name = f"t_{secrets.token_hex(6)}"
        engine = self.admin()
        with engine.connect() as conn:
            conn.exec_driver_sql(f"CREATE DATABASE {name}")
        engine.dispose()
        return sa.engine.make_url(self.url).set(database=name).render_as_string(
            hide_password=False)

    def drop(self, url: str) -> None:
        name = sa.engine.make_url(url).database
        engine = self.admin()
        with engine.connect() as conn:
            conn.exec_driver_sql(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        engine.dispose()


def start(folder: Path) -> Server:
    env = {**os.environ, "INFERSWEEP_PG_DIR": str(folder)}
    up = subprocess.run([str(SCRIPT), "up"], env=env, capture_output=True, text=True,
                        timeout=120)
    if up.returncode != 0:
        raise RuntimeError(f"scripts/postgres-local up failed:\n{up.stdout}{up.stderr}")
    url = subprocess.run([str(SCRIPT), "url"], env=env, capture_output=True, text=True,
                         timeout=30, check=True).stdout.strip()
    return Server(url, folder)


def stop(server: Server) -> None:
    if server.folder is not None:
        subprocess.run([str(SCRIPT), "down"], env={**os.environ,
                                                   "INFERSWEEP_PG_DIR": str(server.folder)},
                       capture_output=True, timeout=60)
