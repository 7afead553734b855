"""Ingest of one N-point run (default 2,000) into the results store, on SQLite and on
PostgreSQL: the first staging, and staging the same run again (every row updated). Each is
set against peers measured in the same process on the same rows: a plain SQLAlchemy
``insert`` executemany of the same ``points`` values into an identical empty table (what the
upsert, the checks and the bookkeeping add), and the driver's own ``executemany`` of
(key, JSON text) pairs (the floor). The issue's budget: 2 s on SQLite, 5 s on PostgreSQL.

    python benchmarks/perf/store_ingest.py [--points 2000] [--runs 5] [--no-postgres]

PostgreSQL is `scripts/postgres-local`'s server: the one ``INFERSWEEP_TEST_PG_URL`` names, or
one started for the benchmark and stopped after it.
"""

from __future__ import annotations

import argparse
import copy
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson
import sqlalchemy as sa

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from infersweep.store import RunInfo, load_run_dir, open_store  # noqa: E402
from infersweep.store.store import point_params  # noqa: E402
from infersweep.store.tables import configs, points  # noqa: E402
from tests import pg  # noqa: E402
from tests.unit.store.store_data import many_points_folder  # noqa: E402

INFO = RunInfo(run_id="33825304569", attempt=1, source="github", pr_number=12,
               labels=("full-sweep-fail-fast",), created_at="2026-12-01T10:00:00Z")


def _fresh(url_factory):
    url = url_factory()
    store = open_store(url)
    store.migrate()
    return url, store


def _plain_insert(store, rows) -> float:
    """SQLAlchemy's executemany of the same ``points`` values, no upsert, no checks."""
    with store.engine.begin() as c:
        c.execute(sa.text("INSERT INTO runs (run_id, attempt, source, labels, staged_at, "
                          "updated_at, ingest_count) VALUES ('peer', 1, 'local', '[]', 'x', "
                          "'x', 1)"))
        c.execute(sa.insert(configs), [{"config_key": k, "updated_at": "x"}
                                       for k in sorted({r["config_key"] for r in rows})])
        pk = c.execute(sa.text("SELECT id FROM runs WHERE run_id = 'peer'")).scalar()
    params = point_params(pk, 1, rows)
    t0 = time.perf_counter()
    with store.engine.begin() as c:
        c.execute(sa.insert(points), params)
    return time.perf_counter() - t0


def _driver_executemany(url: str, rows) -> float:
    """The DBAPI's own executemany of (key, JSON) pairs into a two-column table."""
    engine = sa.create_engine(url)
    with engine.begin() as c:
        c.exec_driver_sql("CREATE TABLE floor (k TEXT PRIMARY KEY, row TEXT NOT NULL)")
    data = [(f"{r['config_key']}|{r['recipe_name']}|{r['conc']}", orjson.dumps(r).decode())
            for r in rows]
    raw = engine.raw_connection()
    try:
        t0 = time.perf_counter()
        cur = raw.cursor()
        mark = "?" if engine.dialect.name == "sqlite" else "%s"
        cur.executemany(f"INSERT INTO floor (k, row) VALUES ({mark}, {mark})", data)
        raw.commit()
        took = time.perf_counter() - t0
    finally:
        raw.close()
        engine.dispose()
    return took


def _timed(fn, *args) -> float:
    t0 = time.perf_counter()
    fn(*args)
    return time.perf_counter() - t0


def _cli(folder: Path, url: str) -> float:
    """`infersweep store ingest FOLDER` in a fresh process: start-up, reading the run, ingest."""
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "infersweep", "store", "ingest", str(folder), "--db",
                    url], check=True, cwd=REPO, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def read_back(name: str, url: str, rows, n_runs: int, reads: int) -> tuple[str, float]:
    """``staged_runs()`` of a store holding ``n_runs`` runs of these rows (what the report
    reads)."""
    store = open_store(url)
    store.migrate()
    for i in range(n_runs):
        store.ingest(RunInfo(run_id=f"{i + 1}", attempt=1, source="github"), rows, [])
    times = []
    for _ in range(reads):
        t0 = time.perf_counter()
        got = store.staged_runs()
        times.append(time.perf_counter() - t0)
    assert len(got) == n_runs and got[-1].points == rows
    store.close()
    return (f"{name}: `staged_runs()` of {n_runs} runs ({n_runs * len(rows)} points)",
            statistics.median(times))


def measure(name: str, url_factory, rows, runs: int,
            folder: Path | None = None) -> list[tuple[str, float]]:
    first, again, plain, floor, cli = [], [], [], [], []
    changed = copy.deepcopy(rows)
    for r in changed:
        r["tput_per_gpu"] *= 1.01
    for _ in range(runs):
        url, store = _fresh(url_factory)
        first.append(_timed(store.ingest, INFO, rows, []))  # the checks included
        again.append(_timed(store.ingest, INFO, changed, []))
        store.close()
        url, store = _fresh(url_factory)
        plain.append(_plain_insert(store, rows))
        store.close()
        floor.append(_driver_executemany(url_factory(), rows))
        if folder is not None:
            cli.append(_cli(folder, url_factory()))
    m = statistics.median
    return [(f"{name}: ingest (first staging)", m(first)),
            (f"{name}: ingest again (every point updated)", m(again)),
            (f"{name}: peer, plain `insert` executemany of the same values", m(plain)),
            (f"{name}: floor, driver executemany of (key, JSON)", m(floor)),
            (f"{name}: `infersweep store ingest RUN` in a fresh process (reads the run too)",
             m(cli) if cli else float("nan"))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--no-postgres", action="store_true")
    ap.add_argument("--read-runs", type=int, default=20,
                    help="runs in the store whose reading back is timed (0: skip)")
    args = ap.parse_args()
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        folder = many_points_folder(Path(tmp) / "run", args.points)
        rows, _, _ = load_run_dir(folder)
        read = time.perf_counter() - t0
        counter = iter(range(10**6))
        sqlite_url = lambda: f"sqlite:///{tmp}/s{next(counter)}.db"  # noqa: E731
        results += measure("SQLite", sqlite_url, rows, args.runs, folder)
        reads = []
        if args.read_runs:
            reads.append(read_back("SQLite", sqlite_url(), rows, args.read_runs, 3))
        if not args.no_postgres:
            server, own = None, None
            if os.environ.get(pg.URL_ENV):
                server = pg.Server(os.environ[pg.URL_ENV], None)
            else:
                own = Path(tempfile.mkdtemp(prefix="infersweep-pg-", dir="/var/tmp"))
                server = pg.start(own)
            made = []

            def database():
                made.append(server.database())
                return made[-1]

            try:
                results += measure("PostgreSQL", database, rows, args.runs, folder)
                if args.read_runs:
                    reads.append(read_back("PostgreSQL", database(), rows, args.read_runs, 3))
            finally:
                for u in made:
                    server.drop(u)
                if own is not None:
                    pg.stop(server)
    print(f"(reading the {len(rows)}-point run folder: {read:.2f} s, not counted below)")
    print(f"| step ({len(rows)} points, median of {args.runs}) | seconds | × peer |")
    print("|---|---:|---:|")
    for i in range(0, len(results), 5):
        peer = results[i + 2][1]
        for label, secs in results[i:i + 5]:
            print(f"| {label} | {secs:.3f} | {secs / peer:.1f} |")
    for label, secs in reads:
        print(f"| {label} | {secs:.3f} | — |")


if __name__ == "__main__":
    main()
