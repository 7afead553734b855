"""The results store on a SQLite file: schema, round trip, idempotent re-ingest, all-or-nothing
writes (a trigger makes the database fail mid-transaction), schema-version errors, previous
runs and staging events. The same behaviours on PostgreSQL: tests/integration/stage."""

from __future__ import annotations

import copy

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext

from infersweep.diagnostics import InputError
from infersweep.store import RunInfo, load_run_dir, open_store
from infersweep.store.connect import resolve
from infersweep.store.tables import metadata
from tests.unit.store.store_data import DISAGG, SINGLE, sweep_folder


@pytest.fixture
def url(tmp_path):
    return f"sqlite:///{tmp_path / 'store.db'}"


@pytest.fixture
def store(url):
    s = open_store(url)
    s.migrate()
    yield s
    s.close()


@pytest.fixture
def rows(tmp_path):
    points, evals, changelog = load_run_dir(sweep_folder(tmp_path / "run"))
    assert evals == [] and changelog is None
    return points


def counts(s) -> dict:
    with s.engine.connect() as c:
        return {t: c.execute(sa.text(f"SELECT count(*) FROM {t}")).scalar()
                for t in ("runs", "configs", "points", "evals", "staging_events")}


def test_migration_creates_exactly_the_declared_tables(url):
    s = open_store(url)
    assert not s.exists and s.revision is None
    assert s.migrate() == s.head == "0003"
    assert s.migrate() == "0003"  # again: nothing to do
    with s.engine.connect() as conn:
        assert compare_metadata(MigrationContext.configure(conn), metadata) == []
    s.close()


def test_round_trip_keeps_every_field_and_the_run(store, rows):
    info = RunInfo(run_id="123", attempt=2, source="github", created_at="2026-12-01T09:00:00+01:00",
                   head_sha="a" * 40, pr_number=7, labels=("full-sweep-fail-fast",),
                   url="https://github.com/o/r/actions/runs/123",
                   changelog={"base_ref": "b", "head_ref": "h", "entries": [{"x": 1}]},
                   workflow=".github/workflows/run-sweep.yml")
    s = store.ingest(info, rows, [])
    assert (s.points_inserted, s.points_updated, s.points_removed) == (5, 0, 0)
    assert s.configs == [DISAGG, SINGLE]
    [run] = store.staged_runs()
    assert run.points == rows  # every processed field, in the aggregate's order
    assert (run.run_id, run.attempt, run.source, run.head_sha, run.pr_number, run.labels,
            run.url, run.changelog) == ("123", 2, "github", "a" * 40, 7,
                                        ("full-sweep-fail-fast",), info.url, info.changelog)
    assert run.created_at == "2026-12-01T08:00:00Z" and run.staged_at.endswith("Z")
    [only] = store.staged_runs(config_keys=[SINGLE])
    assert only.points == [r for r in rows if r["config_key"] == SINGLE]
    assert store.staged_runs(config_keys=["nope"]) == []


def test_reingest_updates_in_place_and_leaves_other_runs_alone(store, rows, tmp_path):
    store.ingest(RunInfo("r1"), rows, [])
    other, _, _ = load_run_dir(sweep_folder(tmp_path / "other", run_id="r2", throughput=1e4))
    store.ingest(RunInfo("r2"), other, [])
    first_staged = store.staged_runs()[0].staged_at
    changed = copy.deepcopy(rows)
    changed[0]["tput_per_gpu"] = 1.5
    s = store.ingest(RunInfo("r1"), changed, [])
    assert (s.points_inserted, s.points_updated, s.points_removed) == (0, 5, 0)
    assert counts(store)["points"] == 10 and counts(store)["runs"] == 2
    r1, r2 = store.staged_runs()
    assert r1.points == changed and r2.points == other
    assert r1.staged_at == first_staged  # restaging keeps the first staging time
    s = store.ingest(RunInfo("r1"), changed[:2], [])
    assert (s.points_inserted, s.points_updated, s.points_removed) == (0, 2, 3)
    assert store.staged_runs()[0].points == changed[:2]
    assert store.staged_runs()[1].points == other


def test_a_bad_row_is_located_and_nothing_is_written(store, rows):
    bad = copy.deepcopy(rows)
    bad[3]["tput_per_gpu"] = -1.0
    del bad[4]["config_key"]
    with pytest.raises(InputError) as exc:
        store.ingest(RunInfo("r1"), bad, [])
    text = str(exc.value)
    assert bad[3]["result_file"] in text and "tput_per_gpu" in text
    assert "point 5" in text and "config_key" in text
    assert counts(store) == {"runs": 0, "configs": 0, "points": 0, "evals": 0,
                             "staging_events": 0}


def test_duplicate_points_and_bad_run_identity_are_refused(store, rows):
    with pytest.raises(InputError, match="is the same point as point 1"):
        store.ingest(RunInfo("r1"), [rows[0], rows[0]], [])
    with pytest.raises(InputError, match="run id 'a b' is not"):
        store.ingest(RunInfo("a b"), rows, [])
    with pytest.raises(InputError, match="source 'ci' is not one of"):
        store.ingest(RunInfo("r1", source="ci"), rows, [])
    with pytest.raises(InputError, match="not an ISO 8601 time"):
        store.ingest(RunInfo("r1", created_at="yesterday"), rows, [])
    assert counts(store)["points"] == 0


def _fail_on_nth(store, n: int, when: str) -> None:
    with store.engine.begin() as c:
        c.exec_driver_sql(
            f"CREATE TRIGGER fail_nth BEFORE {when} ON points "
            f"WHEN (SELECT count(*) FROM points WHERE ingest_seq = NEW.ingest_seq) >= {n} "
            "BEGIN SELECT RAISE(ABORT, 'injected failure'); END")


def test_a_database_failure_mid_ingest_rolls_back_and_a_rerun_is_clean(store, rows):
    _fail_on_nth(store, 3, "INSERT")
    with pytest.raises(InputError) as exc:
        store.ingest(RunInfo("r1"), rows, [])
    assert "injected failure" in str(exc.value) and "rolled back" in str(exc.value)
    assert counts(store) == {"runs": 0, "configs": 0, "points": 0, "evals": 0,
                             "staging_events": 0}
    with store.engine.begin() as c:
        c.exec_driver_sql("DROP TRIGGER fail_nth")
    assert store.ingest(RunInfo("r1"), rows, []).points_inserted == 5
    assert store.staged_runs()[0].points == rows


def test_a_failed_restaging_keeps_the_previous_rows(store, rows):
    store.ingest(RunInfo("r1"), rows, [])
    with store.engine.begin() as c:
        c.exec_driver_sql("CREATE TRIGGER fail_upd BEFORE UPDATE ON points WHEN NEW.conc = 8 "
                          "BEGIN SELECT RAISE(ABORT, 'injected failure'); END")
    changed = copy.deepcopy(rows)
    for r in changed:
        r["tput_per_gpu"] = 0.5
    with pytest.raises(InputError, match="injected failure"):
        store.ingest(RunInfo("r1"), changed, [])
    [run] = store.staged_runs()
    assert run.points == rows
    with store.engine.connect() as c:
        assert c.execute(sa.text("SELECT ingest_count FROM runs")).scalar() == 1


def test_previous_run_is_the_newest_earlier_staging_of_that_config(store, tmp_path):
    def stage(run_id, single=True):
        p, _, _ = load_run_dir(sweep_folder(tmp_path / run_id, run_id=run_id, single=single))
        store.ingest(RunInfo(run_id), p, [])
        return next(r for r in store.staged_runs() if r.run_id == run_id)

    a = stage("a")
    b = stage("b", single=False)
    c = stage("c")
    assert store.previous_run(SINGLE, "c", c.staged_at).run_id == "a"
    prev = store.previous_run(DISAGG, "c", c.staged_at)
    assert prev.run_id == "b" and {r["config_key"] for r in prev.points} == {DISAGG}
    assert store.previous_run(DISAGG, "b", b.staged_at).run_id == "a"
    assert store.previous_run(DISAGG, "a", a.staged_at) is None
    assert store.previous_run(DISAGG, "a", None).run_id == "c"


def test_staging_events_record_who_when_and_how(store):
    store.record_event("123", 1, "octocat", "refused", "no full-sweep label")
    store.record_event("123", 1, "octocat", "staged", None, comment_url="https://x/1")
    events = store.events("123")
    assert [(e["actor"], e["outcome"], e["detail"], e["comment_url"]) for e in events] == [
        ("octocat", "refused", "no full-sweep label", None),
        ("octocat", "staged", None, "https://x/1")]
    assert all(e["at"].endswith("Z") for e in events)
    with pytest.raises(InputError, match="actor '' is not"):
        store.record_event("123", 1, "", "staged")


def test_a_new_store_is_created_by_its_first_ingest_and_nothing_else(url, rows):
    s = open_store(url)
    with pytest.raises(InputError, match="no results store here yet.*store migrate --db"):
        s.staged_runs()
    with pytest.raises(InputError, match="run id"):
        s.ingest(RunInfo("bad id"), rows, [])
    assert not s.exists and s.target.sqlite_path.exists() is False  # refused: nothing made
    assert s.ingest(RunInfo("r1"), rows, []).points_inserted == 5
    assert s.revision == s.head
    s.close()


def test_a_store_behind_the_code_says_to_migrate(url, rows, monkeypatch):
    from infersweep.store import store as store_module

    with open_store(url) as s:
        s.migrate()
    monkeypatch.setattr(store_module, "head_revision", lambda: "0004")  # a newer code base
    s = open_store(url)
    for call in (s.staged_runs, lambda: s.ingest(RunInfo("r1"), rows, []),
                 lambda: s.record_event("r1", 1, "me", "staged")):
        with pytest.raises(InputError, match=r"revision 0003\) is older than this "
                                             r"infersweep's \(0004\).*store migrate --db"):
            call()
    s.close()


def test_a_store_ahead_of_the_code_is_refused(url):
    s = open_store(url)
    s.migrate()
    with s.engine.begin() as c:
        c.exec_driver_sql("UPDATE alembic_version SET version_num = '9999'")
    s.close()
    with pytest.raises(InputError, match=r"revision 9999\) is newer than this infersweep"):
        open_store(url)


def test_the_url_comes_from_the_argument_the_environment_or_the_default(tmp_path,
                                                                        monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("INFERSWEEP_DB_URL", raising=False)
    s = open_store()
    assert s.target.origin == "default" and s.target.shown == "sqlite:///results/infersweep.db"
    s.migrate()
    s.close()
    assert (tmp_path / "results" / "infersweep.db").is_file()
    monkeypatch.setenv("INFERSWEEP_DB_URL", "other.db")
    with open_store() as s:
        assert s.target.origin == "INFERSWEEP_DB_URL" and not s.exists
    pg = resolve("postgresql://u:secret@h:1/db")
    assert pg.dialect == "postgresql" and pg.shown == "postgresql+psycopg://u:***@h:1/db"


def test_bad_urls_are_refused_before_anything_is_created(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for url, fragment in (("mysql://u@h/db", "unsupported database 'mysql'"),
                          ("postgresql+psycopg://u@/db", "names no host"),
                          ("postgresql+psycopg://u@h:5432", "names no database"),
                          ("sqlite://", "names no file")):
        with pytest.raises(InputError, match=fragment):
            open_store(url)
    assert list(tmp_path.iterdir()) == []


def test_the_migrations_ship_as_package_data():
    """A wheel holds every migration file (they are not a Python package of their own)."""
    import fnmatch
    import tomllib
    from pathlib import Path

    import infersweep

    root = Path(infersweep.__file__).parent
    globs = tomllib.loads((root.parent / "pyproject.toml").read_text())[
        "tool"]["setuptools"]["package-data"]["infersweep"]
    files = [p.relative_to(root).as_posix()
             for p in (root / "store" / "migrations").rglob("*")
             if p.is_file() and "__pycache__" not in p.parts]
    assert "store/migrations/versions/0001_initial.py" in files
    assert [f for f in files if not any(fnmatch.fnmatch(f, g) for g in globs)] == []
