"""load_run_dir on both layouts: a `sweep run` folder, and CI's downloaded artifacts (the
aggregate `results collect` wrote, the changelog metadata) at the top of the folder or one
folder down; the aggregate is read as written, and a broken one is refused, located."""

from __future__ import annotations

import json
import shutil

import pytest

from infersweep.diagnostics import InputError
from infersweep.results import collect
from infersweep.store import load_run_dir, read_run_dir
from tests.unit.store.store_data import sweep_folder

CHANGELOG = {"base_ref": "main", "head_ref": "abc", "entries": []}


@pytest.fixture
def sweep(tmp_path):
    return sweep_folder(tmp_path / "sweep", run_id="12345", attempt=2)


def artifacts(sweep, root, nested: bool):
    bmk = root / "results_bmk" if nested else root
    shutil.copytree(sweep, bmk / "results")
    agg = collect.aggregate(collect.gather([bmk / "results"], allow_incomplete=True))
    (bmk / "aggregate").mkdir()
    (bmk / "aggregate" / "results.json").write_bytes(collect.to_json(agg))
    meta = root / "changelog-metadata" if nested else root
    meta.mkdir(parents=True, exist_ok=True)
    (meta / "changelog_metadata.json").write_text(json.dumps(CHANGELOG))
    return root, agg


def test_a_sweep_folder_gives_its_rows_run_id_and_attempt(sweep):
    d = read_run_dir(sweep)
    assert d.layout == "sweep" and d.run_id == "12345" and d.attempt == 2
    assert len(d.points) == 5 and d.evals == [] and d.changelog is None
    assert d.started == "2026-12-01T10:00:00Z"
    assert [(p["config_key"], p["conc"]) for p in d.points] == sorted(
        (p["config_key"], p["conc"]) for p in d.points)


@pytest.mark.parametrize("nested", [False, True])
def test_ci_artifacts_are_read_from_their_aggregate(sweep, tmp_path, nested):
    root, agg = artifacts(sweep, tmp_path / "art", nested)
    points, evals, changelog = load_run_dir(root)
    assert points == agg["rows"] and evals == [] and changelog == CHANGELOG
    assert read_run_dir(root).layout == "artifacts"


def test_a_broken_aggregate_is_refused_with_its_file(sweep, tmp_path):
    root, agg = artifacts(sweep, tmp_path / "art", True)
    agg["rows"][0]["tput_per_gpu"] = "fast"
    path = root / "results_bmk" / "aggregate" / "results.json"
    path.write_text(json.dumps(agg))
    with pytest.raises(InputError) as exc:
        load_run_dir(root)
    assert str(path) in str(exc.value) and "tput_per_gpu" in str(exc.value)


def test_two_different_changelog_metadata_files_are_refused(sweep, tmp_path):
    root, _ = artifacts(sweep, tmp_path / "art", True)
    (root / "results_bmk" / "results" / "changelog_metadata.json").write_text(
        json.dumps({**CHANGELOG, "head_ref": "other"}))
    with pytest.raises(InputError, match="2 different changelog_metadata.json files"):
        load_run_dir(root)


def test_a_folder_of_two_runs_is_refused_by_ingest_unless_named(tmp_path, run_cli,
                                                                monkeypatch):
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    monkeypatch.delenv("INFERSWEEP_DB_URL", raising=False)
    sweep_folder(tmp_path / "results" / "sweep-a", run_id="local-a")
    sweep_folder(tmp_path / "results" / "sweep-b", run_id="local-b", single=False)
    code, out, err = run_cli("store", "ingest", "results", "--db", "s.db", cwd=tmp_path)
    assert code == 1 and "Traceback" not in out + err
    assert "the rows belong to 2 runs: local-a, local-b" in err
    assert not (tmp_path / "s.db").exists()
    code, out, err = run_cli("store", "ingest", "results/sweep-b", "--db", "s.db", cwd=tmp_path)
    assert code == 0, err
    assert "staged run local-b attempt 1: 3 point(s) inserted" in out


def test_a_second_run_with_the_same_points_is_not_hidden_by_the_rerun_rule(tmp_path):
    from tests import reportruns

    reportruns.write_run(tmp_path / "a", "1")
    reportruns.write_run(tmp_path / "b", "2")  # the same points, another run
    d = read_run_dir(tmp_path)
    assert d.run_id is None and d.run_ids == ["1", "2"]
