"""The results store on SQLite and on a real PostgreSQL, with the seed sweep's real points and
GSM8K evals: the same migration, a faithful round trip, idempotent restaging, and nothing
half-written when the database fails mid-ingest (a trigger that raises on one row; on
PostgreSQL also the session killed from a second connection) — then a clean re-run."""

from __future__ import annotations

import copy

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext

from infersweep.diagnostics import InputError
from infersweep.store import RunInfo, load_run_dir, open_store
from infersweep.store.tables import metadata

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def seed_rows(seed_sweep):
    points, evals, _ = load_run_dir(seed_sweep)
    assert len(points) == 11 and len(evals) == 2
    return points, evals


@pytest.fixture
def store(store_url):
    s = open_store(store_url)
    s.migrate()
    yield s
    s.close()


def counts(s) -> dict:
    with s.engine.connect() as c:
        return {t: c.execute(sa.text(f"SELECT count(*) FROM {t}")).scalar()
                for t in ("runs", "configs", "points", "evals")}


INFO = RunInfo(run_id="33825304569", attempt=1, source="github",
               created_at="2026-12-01T10:00:00Z", head_sha="c" * 40, pr_number=12,
               labels=("full-sweep-fail-fast",), url="https://github.com/o/r/actions/runs/1",
               changelog={"base_ref": "main", "head_ref": "c" * 40, "entries": []},
               workflow=".github/workflows/run-sweep.yml")


def test_the_migration_matches_the_tables_on_both(store):
    assert store.revision == store.head
    with store.engine.connect() as conn:
        assert compare_metadata(MigrationContext.configure(conn), metadata) == []


def test_the_migration_downgrades_and_upgrades_again(store):
    from alembic import command

    from infersweep.store.store import _alembic

    with store.engine.begin() as conn:
        command.downgrade(_alembic(conn), "base")
    with store.engine.connect() as conn:
        assert set(sa.inspect(conn).get_table_names()) <= {"alembic_version"}
    assert store.migrate() == store.head
    with store.engine.connect() as conn:
        assert compare_metadata(MigrationContext.configure(conn), metadata) == []


def test_points_and_evals_round_trip_and_restaging_keeps_one_copy(store, seed_rows):
    points, evals = seed_rows
    first = store.ingest(INFO, points, evals)
    assert (first.points_inserted, first.evals_inserted) == (11, 2)
    again = store.ingest(INFO, points, evals)
    assert (again.points_inserted, again.points_updated, again.evals_inserted,
            again.evals_updated) == (0, 11, 0, 2)
    assert counts(store) == {"runs": 1, "configs": 1, "points": 11, "evals": 2}
    [run] = store.staged_runs()
    assert run.points == points and run.evals == evals
    assert (run.run_id, run.pr_number, run.labels, run.changelog) == (
        INFO.run_id, 12, INFO.labels, INFO.changelog)
    # evals join to their points on run, config key and recipe fingerprint
    with store.engine.connect() as c:
        joined = c.execute(sa.text(
            "SELECT count(DISTINCT e.id) FROM evals e JOIN points p ON p.run_pk = e.run_pk "
            "AND p.config_key = e.config_key AND p.recipe_fingerprint = e.recipe_fingerprint"
        )).scalar()
    assert joined == 2


def test_the_recipes_the_jobs_ran_are_kept_once_and_dropped_with_their_last_run(store,
                                                                               seed_sweep):
    from infersweep.store import read_run_dir

    d = read_run_dir(seed_sweep)
    assert len(d.recipes) == 2 and all(r["text"].startswith("# Rendered") for r in d.recipes)
    other = RunInfo(run_id="33825304570", source="github")
    for info in (INFO, other):
        store.ingest(info, d.points, d.evals, (), d.recipes)

    def rows():
        with store.engine.connect() as c:
            return [c.execute(sa.text(f"SELECT count(*) FROM {t}")).scalar()
                    for t in ("run_recipes", "recipe_texts")]
    assert rows() == [4, 2]  # both runs ran the same two texts
    assert [r.recipes for r in store.staged_runs()] == [d.recipes, d.recipes]
    store.ingest(INFO, d.points, d.evals)  # restaged without them
    assert rows() == [2, 2]
    store.ingest(other, d.points, d.evals)
    assert rows() == [0, 0]


def test_another_attempt_is_another_run_and_leaves_the_first_alone(store, seed_rows):
    points, evals = seed_rows
    store.ingest(INFO, points, evals)
    rerun = copy.deepcopy(points)
    for r in rerun:
        r["tput_per_gpu"] *= 2
    store.ingest(RunInfo(INFO.run_id, attempt=2, source="github"), rerun, evals)
    one, two = store.staged_runs()
    assert (one.attempt, two.attempt) == (1, 2)
    assert one.points == points and two.points == rerun
    assert counts(store)["points"] == 22


def _trigger_failing_on_conc(store, conc: int) -> None:
    with store.engine.begin() as c:
        if store.target.dialect == "postgresql":
            c.exec_driver_sql(
                "CREATE FUNCTION fail_row() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                "RAISE EXCEPTION 'injected failure'; END $$")
            c.exec_driver_sql(f"CREATE TRIGGER fail_row BEFORE INSERT OR UPDATE ON points "
                              f"FOR EACH ROW WHEN (NEW.conc = {conc}) "
                              "EXECUTE FUNCTION fail_row()")
        else:
            c.exec_driver_sql(f"CREATE TRIGGER fail_ins BEFORE INSERT ON points WHEN NEW.conc "
                              f"= {conc} BEGIN SELECT RAISE(ABORT, 'injected failure'); END")
            c.exec_driver_sql(f"CREATE TRIGGER fail_upd BEFORE UPDATE ON points WHEN NEW.conc "
                              f"= {conc} BEGIN SELECT RAISE(ABORT, 'injected failure'); END")


def _drop_trigger(store) -> None:
    with store.engine.begin() as c:
        if store.target.dialect == "postgresql":
            c.exec_driver_sql("DROP TRIGGER fail_row ON points")
        else:
            c.exec_driver_sql("DROP TRIGGER fail_ins")
            c.exec_driver_sql("DROP TRIGGER fail_upd")


def test_a_failing_row_rolls_back_the_whole_ingest_then_a_rerun_is_clean(store, seed_rows):
    points, evals = seed_rows
    other = RunInfo("other-run")
    store.ingest(other, [p for p in points if p["conc"] != 16], [])
    _trigger_failing_on_conc(store, 16)  # the third point of the run
    with pytest.raises(InputError) as exc:
        store.ingest(INFO, points, evals)
    assert "injected failure" in str(exc.value) and "rolled back" in str(exc.value)
    assert counts(store) == {"runs": 1, "configs": 1, "points": 10, "evals": 0}
    _drop_trigger(store)
    done = store.ingest(INFO, points, evals)
    assert (done.points_inserted, done.evals_inserted) == (11, 2)
    assert [r.run_id for r in store.staged_runs()] == ["other-run", INFO.run_id]


def test_a_failing_restaging_keeps_the_staged_rows(store, seed_rows):
    points, evals = seed_rows
    store.ingest(INFO, points, evals)
    _trigger_failing_on_conc(store, 16)
    changed = copy.deepcopy(points)
    for r in changed:
        r["tput_per_gpu"] = 1.0
    with pytest.raises(InputError, match="injected failure"):
        store.ingest(INFO, changed, evals[:1])
    [run] = store.staged_runs()
    assert run.points == points and run.evals == evals


def test_a_killed_postgresql_session_mid_ingest_rolls_back_and_a_rerun_is_clean(
        pg_url, seed_rows):
    points, evals = seed_rows
    store = open_store(pg_url)
    store.migrate()
    killer = sa.create_engine(pg_url, isolation_level="AUTOCOMMIT")
    killed = []

    @sa.event.listens_for(store.engine, "after_cursor_execute")
    def kill_after_points(conn, cursor, statement, params, context, executemany):
        if not killed and statement.lstrip().upper().startswith("INSERT INTO POINTS"):
            pid = conn.connection.dbapi_connection.info.backend_pid
            with killer.connect() as k:
                k.execute(sa.text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
            killed.append(pid)

    with pytest.raises(InputError) as exc:
        store.ingest(INFO, points, evals)
    assert killed
    text = str(exc.value)
    assert "connection failed or was lost" in text and "rolled back" in text
    assert "PostgreSQL at 127.0.0.1:" in text
    sa.event.remove(store.engine, "after_cursor_execute", kill_after_points)
    assert counts(store) == {"runs": 0, "configs": 0, "points": 0, "evals": 0}
    done = store.ingest(INFO, points, evals)  # same Store: the pool replaced the connection
    assert (done.points_inserted, done.evals_inserted) == (11, 2)
    assert store.staged_runs()[0].points == points
    store.close()
    killer.dispose()


def test_a_database_gone_after_opening_is_a_connection_error(pg_server, seed_rows):
    points, evals = seed_rows
    url = pg_server.database()
    store = open_store(url)
    store.migrate()
    store.engine.dispose()  # no pooled connection left: the next one must connect
    pg_server.drop(url)
    with pytest.raises(InputError) as exc:
        store.ingest(INFO, points, evals)
    text = str(exc.value)
    assert "the connection failed or was lost" in text and "does not exist" in text
    assert "check that the server runs" in text
    store.close()
