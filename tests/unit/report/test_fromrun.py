"""A staged run read from a sweep folder, a downloaded results artifact or an aggregate."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from infersweep.diagnostics import InputError
from infersweep.report import fromrun
from tests import reportruns

META = {"base_ref": "main", "head_ref": "pr", "entries": [{"config-keys": [reportruns.KEY],
                                                          "description": ["why"]}]}


def test_a_sweep_folder_is_processed_like_results_collect_and_eval_collect(tmp_path):
    run = fromrun.load(reportruns.write_run(tmp_path, "1234", evals=(0.95,), changelog=META))
    assert (run.run_id, run.attempt, run.source) == ("1234", 1, "local")  # a sweep folder
    assert run.staged_at == run.created_at == "2026-12-01T10:00:00Z"  # its manifests
    assert len(run.points) == 7 and {p["topology"] for p in run.points} == {
        "1p-tp8+1d-tp8", "2p-tp8-dpa+1d-tp8-dpa"}
    assert [e["em-strict"] for e in run.evals] == [0.95]
    assert run.changelog == META


def test_an_artifact_and_an_aggregate_give_the_same_run(tmp_path):
    src = reportruns.write_run(tmp_path / "src", "local-1", evals=(0.95, 0.4))
    art = tmp_path / "artifact"
    (art / "aggregate").mkdir(parents=True)
    (art / "results").mkdir()
    (art / "results" / "changelog_metadata.json").write_text(json.dumps(META))
    # a results_bmk artifact holds the job folders (eval folders included) beside aggregate/
    shutil.copytree(src / reportruns.KEY, art / "results" / reportruns.KEY)
    for cmd in (["results", "collect", str(src), "-o", str(art / "aggregate/results.json")],
                ["eval", "collect", str(src), "-o", str(art / "aggregate/evals.json")]):
        subprocess.run([sys.executable, "-m", "infersweep", *cmd], check=True,
                       capture_output=True)
    direct = fromrun.load(src)
    from_artifact = fromrun.load(art)
    from_file = fromrun.load(art / "aggregate" / "results.json")
    assert from_artifact.source == "local" and from_artifact.changelog == META
    assert from_file.changelog == META and len(from_file.evals) == 2  # found beside it
    for r in (from_artifact, from_file):
        assert r.points == direct.points
        assert [e["em-strict"] for e in r.evals] == [e["em-strict"] for e in direct.evals]
    assert from_artifact.staged_at == json.loads(
        (art / "aggregate/results.json").read_text())["created"]


def test_the_newest_attempt_names_the_run(tmp_path):
    reportruns.write_run(tmp_path, "99", attempt=1)
    reportruns.write_run(tmp_path / "retry", "99", attempt=2, concs_one=(4,), concs_two=(64,))
    run = fromrun.load(tmp_path)
    assert run.attempt == 2 and run.label == "99 (attempt 2)"


def test_rows_of_two_runs_are_refused(tmp_path):
    reportruns.write_run(tmp_path / "a", "1")
    reportruns.write_run(tmp_path / "b", "2")
    with pytest.raises(InputError, match=r"rows of several runs \(1, 2\)"):
        fromrun.load(tmp_path)
