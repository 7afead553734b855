"""Agentic-coding results in the store (SQLite): stored beside fixed-length points with their
headline columns and the whole result, the KV-offload mode part of a point's identity,
idempotent per run, attempt and point, a scaled-down local result stored as never
publishable, and tampered results refused with nothing written."""

from __future__ import annotations

import copy
import json

import pytest
import sqlalchemy as sa

from infersweep.diagnostics import InputError
from infersweep.results import collect as collecting
from infersweep.store import RunInfo, open_store
from infersweep.store.ingest import ingest_folder
from infersweep.store.tables import agentic_points
from tests.unit.agentic import agenticjob
from tests.unit.store import agentic_data as ad
from tests.unit.store.store_data import sweep_folder


@pytest.fixture
def store(tmp_path):
    s = open_store(f"sqlite:///{tmp_path / 'store.db'}")
    s.migrate()
    yield s
    s.close()


@pytest.fixture
def run(tmp_path):
    """A sweep folder: the seed's fixed-length jobs and two agentic jobs (a publishable one
    without offload, a local one with DRAM offload through LMCache)."""
    root = sweep_folder(tmp_path / "run")
    ad.publishable_job(root / "agentic" / "none")
    ad.local_job(root / "agentic" / "dram", **ad.OFFLOAD)
    return root


def rows(s) -> list[dict]:
    with s.engine.connect() as c:
        return [dict(r._mapping) for r in c.execute(
            sa.select(agentic_points).order_by(agentic_points.c.ordinal))]


def test_agentic_results_are_stored_beside_the_points_with_their_headline_numbers(store, run):
    staged = ingest_folder(store, run)
    s = staged.summary
    assert s.points_inserted > 0 and s.agentic_inserted == 2
    assert "2 agentic result(s) inserted" in s.line
    got = rows(store)
    assert [(r["kv_offloading"], r["kv_offload_backend"]) for r in got] == [
        ("dram", "lmcache"), ("none", "")]  # sorted by offload mode
    local, full = got
    result = json.loads((run / "agentic" / "none" / "dsv4-c2.agentic.json").read_text())
    assert full["result"] == result  # the whole result, as written
    per_gpu = result["request_metrics"]["throughput"]["per_gpu"]
    lat = result["request_metrics"]["latency"]
    assert full["tput_per_gpu"] == per_gpu["total_tput_tps"]
    assert full["output_tput_per_gpu"] == per_gpu["output_tput_tps"]
    assert full["input_tput_per_gpu"] == per_gpu["input_tput_tps"]
    assert full["median_intvty"] == lat["intvty"]["p50"]
    assert (full["median_ttft"], full["p90_ttft"], full["p99_ttft"]) == (
        lat["ttft"]["p50"], lat["ttft"]["p90"], lat["ttft"]["p99"])
    assert full["median_e2el"] == lat["e2el"]["p50"]
    assert full["server_gpu_cache_hit_rate"] == result["server_metrics"][
        "server_gpu_cache_hit_rate"]
    assert full["server_cpu_cache_hit_rate"] == result["server_metrics"][
        "server_cpu_cache_hit_rate"]
    assert full["theoretical_cache_hit_rate"] == result["request_metrics"]["cache"][
        "theoretical_cache_hit_rate"]
    assert full["gpu_kv_cache_usage"] == 0.5 and full["error_rate"] == 0.0
    assert full["num_requests_successful"] == 80 and full["conc"] == 2
    assert (full["publishable"], full["scaled"]) == (True, False)
    assert (local["publishable"], local["scaled"]) == (False, True)
    (back,) = store.staged_runs()
    assert [e["result"] for e in back.agentic] == [r["result"] for r in got]
    assert {r["agentic"] for r in store.overview()} == {2}
    assert [r["agentic_not_publishable"] for r in store.overview()] == [1]


def test_restaging_updates_in_place_and_drops_what_the_run_no_longer_holds(store, run):
    ingest_folder(store, run)
    again = ingest_folder(store, run).summary
    assert (again.agentic_inserted, again.agentic_updated, again.agentic_removed) == (0, 2, 0)
    assert len(rows(store)) == 2
    import shutil

    shutil.rmtree(run / "agentic" / "dram")
    third = ingest_folder(store, run).summary
    assert (third.agentic_inserted, third.agentic_updated, third.agentic_removed) == (0, 1, 1)
    assert [r["kv_offloading"] for r in rows(store)] == ["none"]
    # another attempt of the run is another staged run
    ingest_folder(store, run, attempt=2)
    assert len(rows(store)) == 2


def test_the_kv_offload_mode_is_part_of_a_points_identity(store, tmp_path):
    (entry,) = ad.entries(ad.local_job(tmp_path / "j").parent)
    lmcache = copy.deepcopy(entry)
    lmcache["result"] |= {"kv_offloading": "dram", "kv_offload_backend": "lmcache"}
    mooncake = copy.deepcopy(lmcache)
    mooncake["result"]["kv_offload_backend"] = "mooncake"
    s = store.ingest(RunInfo("r1"), [], [], [entry, lmcache, mooncake])
    assert s.agentic_inserted == 3
    with pytest.raises(InputError, match=r"same point as agentic result 2"):
        store.ingest(RunInfo("r2"), [], [], [entry, lmcache, copy.deepcopy(lmcache)])
    assert {r["run_id"] for r in store.agentic_points()} == {"r1"}


def test_a_scaled_down_result_is_never_stored_as_publishable(store, tmp_path):
    (entry,) = ad.entries(ad.local_job(tmp_path / "j").parent)
    store.ingest(RunInfo("r1"), [], [], [entry])
    (row,) = store.agentic_points()
    assert (row["publishable"], row["scaled"]) == (False, True)
    claims = copy.deepcopy(entry)
    claims["result"]["publishable"] = True  # the result says so; it was scaled down
    claims["result"]["submission_valid"] = True
    with pytest.raises(InputError, match=r"'publishable' must be false"):
        store.ingest(RunInfo("r2"), [], [], [claims])
    assert [r["run_id"] for r in store.agentic_points()] == ["r1"]


def _tamper_consistently(job, edit) -> None:
    """Edit the result the way a forger would: every number the edit touches, recomputed
    per GPU, with the schema still satisfied; the exports are left as measured."""
    path = job / "dsv4-c2.agentic.json"
    data = agenticjob.load(path)
    edit(data)
    agenticjob.save(path, data)


def _double_throughput(d):
    tp = d["request_metrics"]["throughput"]
    for side in ("input", "output", "total"):
        tp[side]["tokens_per_second"] *= 2
    for k in tp["per_gpu"]:
        tp["per_gpu"][k] *= 2


def _publishable_claim(d):
    d.update(scaled=None, publishable=True, publishable_reason=None, submission_valid=True)


@pytest.mark.parametrize("edit, rule", [(_double_throughput, "agentic-consistency"),
                                        (_publishable_claim, "agentic-consistency")])
def test_a_tampered_result_is_refused_and_nothing_is_written(store, run, edit, rule):
    _tamper_consistently(run / "agentic" / "dram", edit)
    with pytest.raises(InputError, match=rf"did not pass the agentic gates: \[{rule}\]"):
        ingest_folder(store, run)
    assert rows(store) == [] and store.overview() == []


def test_an_aggregate_is_judged_on_the_result_files_it_names(store, run, tmp_path):
    """Downloaded artifacts: the aggregate's copy of a result is not what is stored; the
    result file beside its exports is judged again. A result the aggregate names but the
    folder lacks is refused."""
    agg = collecting.aggregate(collecting.gather([str(run)], allow_incomplete=True))
    (run / "aggregate").mkdir()
    data = json.loads(collecting.to_json(agg))
    assert len(data["agentic"]) == 2
    for e in data["agentic"]:  # as the collect job wrote it: relative to the artifact
        e["result_file"] = str(
            __import__("pathlib").Path(e["result_file"]).relative_to(run))
    data["agentic"][1]["result"]["request_metrics"]["throughput"]["per_gpu"][
        "total_tput_tps"] *= 10  # an edit in the aggregate only
    (run / "aggregate" / "results.json").write_text(json.dumps(data))
    ingest_folder(store, run)
    full = [r for r in rows(store) if r["kv_offloading"] == "none"][0]
    real = agenticjob.load(run / "agentic" / "none" / "dsv4-c2.agentic.json")
    assert full["tput_per_gpu"] == real["request_metrics"]["throughput"]["per_gpu"][
        "total_tput_tps"]

    data["agentic"][0]["result_file"] = "agentic/gone/dsv4-c2.agentic.json"
    (run / "aggregate" / "results.json").write_text(json.dumps(data))
    with pytest.raises(InputError, match=r"agentic-evidence"):
        ingest_folder(store, run, run_id=None)


def test_the_aggregate_schema_checks_the_agentic_list(run):
    from infersweep.config.schema import validate_data

    agg = json.loads(collecting.to_json(
        collecting.aggregate(collecting.gather([str(run)], allow_incomplete=True))))
    assert validate_data(agg, "results-aggregate") == []
    agg["agentic"][0]["result"]["conc"] = "two"
    assert validate_data(agg, "results-aggregate")
    del agg["agentic"][0]["result"]
    assert any("result" in m for m in validate_data(agg, "results-aggregate"))
