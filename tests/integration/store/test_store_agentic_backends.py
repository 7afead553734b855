"""Agentic results on SQLite and a real PostgreSQL: the migration creates their table, an
ingest stores them with their KV-offload mode as part of the point, restaging updates in
place, and a database failure mid-ingest leaves nothing of it."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from infersweep.diagnostics import InputError
from infersweep.store import RunInfo, open_store
from tests.unit.store import agentic_data as ad

pytestmark = pytest.mark.integration


def test_agentic_results_round_trip_and_restage_in_place(store_url, tmp_path):
    ad.publishable_job(tmp_path / "none")
    ad.local_job(tmp_path / "dram", **ad.OFFLOAD)
    entries = ad.entries(tmp_path / "none", tmp_path / "dram")
    with open_store(store_url) as s:
        s.migrate()
        first = s.ingest(RunInfo("r1"), [], [], entries)
        again = s.ingest(RunInfo("r1"), [], [], entries)
        assert (first.agentic_inserted, again.agentic_updated) == (2, 2)
        got = s.agentic_points()
        assert [(r["kv_offloading"], r["publishable"], r["scaled"]) for r in got] == [
            ("dram", False, True), ("none", True, False)]
        (run,) = s.staged_runs()
        assert [e["result"] for e in run.agentic] == [e["result"] for e in entries]
        # the database refuses the second row mid-ingest: nothing of that ingest stays
        with s.engine.begin() as c:
            if s.target.dialect == "postgresql":
                c.execute(sa.text(
                    "CREATE FUNCTION no_dram() RETURNS trigger AS $$ BEGIN IF "
                    "NEW.kv_offloading = 'dram' THEN RAISE EXCEPTION 'no dram'; END IF; "
                    "RETURN NEW; END $$ LANGUAGE plpgsql"))
                c.execute(sa.text("CREATE TRIGGER no_dram BEFORE INSERT ON agentic_points "
                                  "FOR EACH ROW EXECUTE FUNCTION no_dram()"))
            else:
                c.execute(sa.text("CREATE TRIGGER no_dram BEFORE INSERT ON agentic_points "
                                  "WHEN NEW.kv_offloading = 'dram' BEGIN "
                                  "SELECT RAISE(ABORT, 'no dram'); END"))
        with pytest.raises(InputError, match="rolled back"):
            s.ingest(RunInfo("r2"), [], [], entries)
        assert {r["run_id"] for r in s.agentic_points()} == {"r1"}
        assert [r["run_id"] for r in s.overview()] == ["r1"]
