"""Stores for the results-store tests (a SQLite file, a database on a real PostgreSQL) and
the seed sweep they ingest."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from tests import pg
from tests.conftest import FROZEN_MASTER, FROZEN_RUNNERS
from tests.livecatalog import frozen_checkout


@pytest.fixture(scope="session")
def pg_server():
    url = os.environ.get(pg.URL_ENV)
    if url:
        yield pg.Server(url, None)
        return
    if not pg.binaries_present():
        pg.unavailable("no binaries under /usr/lib/postgresql/*/bin (apt-get install postgresql)")
    # not under pytest's private tmp: the server runs as the postgres user
    folder = Path(tempfile.mkdtemp(prefix="infersweep-pg-", dir="/var/tmp"))
    try:
        server = pg.start(folder)
    except RuntimeError as exc:
        pg.unavailable(str(exc))
    try:
        yield server
    finally:
        pg.stop(server)


@pytest.fixture
def pg_url(pg_server):
    url = pg_server.database()
    yield url
    pg_server.drop(url)


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request, tmp_path):
    """Each test once on SQLite and once on PostgreSQL, with an empty store."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'store.db'}"
    return request.getfixturevalue("pg_url")


REPO = Path(__file__).resolve().parents[3]
GSM8K = REPO.parent / "shared" / "data" / "gsm8k"
SEED_KEY = "dsv4-fp4-mi355x-atom-disagg"


@pytest.fixture(scope="session")
def seed_sweep(tmp_path_factory) -> Path:
    """The seed config's local sweep (simulated engines, our client) with both rows' GSM8K
    evals, on the frozen catalog files: 11 points and 2 evals."""
    import subprocess
    import sys

    out = tmp_path_factory.mktemp("seed-sweep") / "run"
    data = (["--eval-data", str(GSM8K)] if (GSM8K / "test.jsonl").is_file()
            and (GSM8K / "train.jsonl").is_file() else [])
    env = {**os.environ, "INFERSWEEP_EVAL_ACCURACY": "0.96"}
    env.pop("GITHUB_STEP_SUMMARY", None)
    proc = subprocess.run(
        [sys.executable, "-m", "infersweep", "sweep", "run", "--repo", str(frozen_checkout()),
         "--config-files", str(FROZEN_MASTER),
         "--runner-config", str(FROZEN_RUNNERS),
         "--config-keys", SEED_KEY, "--scale-down", "20", "--output", str(out), *data],
        capture_output=True, text=True, timeout=900, env=env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return out
