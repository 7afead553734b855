"""An agentic job's folder split into the pair a benchmark job uploads, and joined back after
collect's download, on a job folder laid out as the local executor leaves one."""

from __future__ import annotations

import json
from pathlib import Path

from infersweep.launch import agenticartifacts as arts

POINT = "dsv4-agentic-c4"
JOB = "dsv4-fp4-mi355x-sglang-agentic/dsv4-agentic"


def _job(root: Path, *, with_result=True) -> Path:
    """A job folder: manifest, row, a point's result naming its exports, the replay plan
    (absolute artifact_dir, as the replay writes it), the exports with the request bodies,
    and the tokenizer laid out for the client."""
    job = root / JOB
    point = job / "logs" / "fixed-seq" / POINT
    exports = point / "aiperf"
    (exports / "logs").mkdir(parents=True)
    for name in ("profile_export.jsonl", "server_metrics_export.json", "inputs.json",
                 "profile_export_raw.jsonl", "logs/aiperf.log"):
        (exports / name).write_text(name)
    (point / "hf-home" / "hub").mkdir(parents=True)
    (point / "hf-home" / "hub" / "tokenizer.json").write_text("{}")
    (point / arts.PLAN_FILE).write_text(json.dumps({"plan": {
        "artifact_dir": str(exports.resolve())}}))
    (point / "replay.log").write_text("replayed")
    (job / "manifest.json").write_text("{}")
    (job / "row.json").write_text(json.dumps({"scenario-type": "agentic-coding"}))
    if with_result:
        (job / "logs" / "fixed-seq" / f"{POINT}.agentic.json").write_text(
            json.dumps({"artifacts": f"{POINT}/aiperf", "conc": 4}))
    return job


def _tree(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


def test_split_partitions_the_job_folder_without_request_bodies(tmp_path):
    _job(tmp_path / "results")
    before = _tree(tmp_path / "results")
    done = arts.split(tmp_path / "results", tmp_path / "up" / "results", tmp_path / "up" / "exports")
    results, exports = _tree(tmp_path / "up" / "results"), _tree(tmp_path / "up" / "exports")
    base = f"{JOB}/logs/fixed-seq"
    assert exports == {f"{base}/{POINT}/aiperf/{n}" for n in (
        "profile_export.jsonl", "server_metrics_export.json", "logs/aiperf.log")}
    assert results == {f"{JOB}/manifest.json", f"{JOB}/row.json",
                       f"{base}/{POINT}.agentic.json", f"{base}/{POINT}/{arts.PLAN_FILE}",
                       f"{base}/{POINT}/replay.log"}
    assert not results & exports
    assert len(done.left_out) == 3 and sorted(done.results) == sorted(results)
    assert before == _tree(tmp_path / "results")  # the job folder is left as it was


def test_exports_of_a_point_whose_result_was_never_written_still_go_with_the_exports(tmp_path):
    _job(tmp_path / "results", with_result=False)
    arts.split(tmp_path / "results", tmp_path / "r", tmp_path / "e")
    assert any(f.endswith("aiperf/profile_export.jsonl") for f in _tree(tmp_path / "e"))
    assert not [f for f in _tree(tmp_path / "r") if "/aiperf/" in f]


def test_join_rebuilds_each_job_folder_and_refuses_a_file_in_both(tmp_path):
    _job(tmp_path / "job")
    arts.split(tmp_path / "job", tmp_path / "results" / "bmk_agentic_single-node-agentic-1_1",
               tmp_path / "exports" / "agentic_single-node-agentic-1_1")
    done = arts.join(tmp_path / "results", tmp_path / "exports", tmp_path / "results" / "agentic")
    assert done.problems == []
    [job] = done.jobs
    assert job == tmp_path / "results" / "agentic" / "single-node-agentic-1_1"
    rebuilt = _tree(job)
    assert f"{JOB}/logs/fixed-seq/{POINT}.agentic.json" in rebuilt
    assert f"{JOB}/logs/fixed-seq/{POINT}/aiperf/profile_export.jsonl" in rebuilt
    assert not (tmp_path / "results" / "bmk_agentic_single-node-agentic-1_1").exists()
    # a pair whose exports would replace a result, and exports with no results: refused
    (tmp_path / "results" / "bmk_agentic_x_1").mkdir()
    (tmp_path / "results" / "bmk_agentic_x_1" / "row.json").write_text("{}")
    (tmp_path / "exports" / "agentic_x_1").mkdir()
    (tmp_path / "exports" / "agentic_x_1" / "row.json").write_text("[]")
    (tmp_path / "exports" / "agentic_y_1").mkdir()
    (tmp_path / "exports" / "agentic_y_1" / "a").write_text("a")
    done = arts.join(tmp_path / "results", tmp_path / "exports", tmp_path / "out")
    assert done.jobs == []
    assert [d.path for d in done.problems] == [
        "agentic_x_1", "agentic_y_1"]
    assert "in both artifacts" in done.problems[0].message
    assert (tmp_path / "results" / "bmk_agentic_x_1" / "row.json").read_text() == "{}"


def _rows() -> tuple[dict, dict]:
    """(an agentic row, a fixed-seq-len row) as the setup job writes them."""
    from infersweep.changelog.process import normalise
    from infersweep.config.catalog import load_catalog
    from infersweep.matrix.generate import Selection, keyed_rows
    from tests.conftest import REPO

    data = REPO / "tests" / "data"
    cat = load_catalog([data / "catalog" / "amd-master.yaml",
                        data / "agentic" / "agentic-master.yaml"],
                       data / "catalog" / "runners.yaml", strict_runners=False)
    rows = [normalise(r) for r in keyed_rows(cat, Selection(
        config_keys=["dsv4-fp4-mi355x-atom-agentic", "dsv4-fp4-mi355x-atom-disagg"],
        evals="none"))]
    return (next(r for r in rows if arts.is_agentic_row(r)),
            next(r for r in rows if not arts.is_agentic_row(r)))


def test_the_split_command_says_which_upload_the_row_needs(run_cli, tmp_path, monkeypatch):
    _job(tmp_path / "results")
    out = tmp_path / "github_output"
    monkeypatch.setenv("GITHUB_OUTPUT", str(out))
    agentic, fixed = _rows()
    row = json.dumps(agentic)
    code, _, err = run_cli("agentic", "artifacts", "split", tmp_path / "results",
                           "--out", tmp_path / "up", "--row", row)
    assert code == 0, err
    assert "kind" in out.read_text() and "fixed-seq" not in out.read_text()
    assert (tmp_path / "up" / "exports").is_dir() and (tmp_path / "up" / "results").is_dir()
    out.write_text("")
    code, _, err = run_cli("agentic", "artifacts", "split", tmp_path / "results",
                           "--out", tmp_path / "up2", "--row", json.dumps(fixed))
    assert code == 0, err
    assert "fixed-seq" in out.read_text() and not (tmp_path / "up2").exists()
