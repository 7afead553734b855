"""`infersweep launch` on the local fleet: the launcher the workflows call, on the runner
itself (local executor, simulated engines), at the fleet's scale-down; and the in-run gate on
a run whose jobs produced nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from infersweep.changelog import buckets
from tests.conftest import REPO
from tests.livecatalog import frozen_checkout
from tests.unit.test_sweep_jobs import SEED, _matrix


def _launch(row: dict, out, env_extra=None):
    env = {**os.environ, "RUNNER_NAME": "local_01", "GITHUB_RUN_ID": "4242",
           "GITHUB_RUN_ATTEMPT": "2", **(env_extra or {})}
    env.pop("INFERSWEEP_RESULT_DIR", None)
    return subprocess.run([sys.executable, "-m", "infersweep", "launch", "--row",
                           json.dumps(row), "--repo", str(frozen_checkout()), "--output",
                           str(out)],
                          capture_output=True, text=True, env=env, timeout=600)


def test_the_local_fleet_runs_a_row_with_its_eval_and_writes_the_manifest(tmp_path):
    outputs = buckets.job_outputs(_matrix([SEED]))
    buckets.take_canary(outputs)
    row = outputs["multi-node"][0]  # 1P1D c8-128, the eval at 128
    proc = _launch(row, tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    assert "fleet local" in proc.stderr
    [manifest] = (tmp_path / "out").rglob("manifest.json")
    m = json.loads(manifest.read_text())
    assert [p["conc"] for p in m["points"]] == [8, 16, 32, 64, 128]
    assert all(p["status"] == "present" for p in m["points"])
    assert m["scale-down"] == 40  # the fleet's own
    assert m["provenance"]["executor"] == "local"
    assert m["provenance"]["config-key"] == SEED == row["config-key"]  # the catalog's key
    assert (m["provenance"]["run-id"], m["provenance"]["attempt"]) == ("4242", 2)
    assert m["eval"]["status"] == "present" and m["eval"]["n-samples"] == 33  # ceil(1319/40)


def test_a_failing_engine_turns_the_launch_red_with_the_points_named(tmp_path):
    outputs = buckets.job_outputs(_matrix([SEED]))
    canary = buckets.take_canary(outputs)
    proc = _launch(canary, tmp_path / "out", {"INFERSWEEP_SIM_ARGS": "--fail-rate 1"})
    assert proc.returncode == 1
    [manifest] = (tmp_path / "out").rglob("manifest.json")
    point = json.loads(manifest.read_text())["points"][0]
    assert point["conc"] == 4 and point["status"] != "present"


def test_the_in_run_gate_names_every_point_of_a_run_that_produced_nothing(tmp_path, run_cli):
    from infersweep.changelog import shards

    outputs = buckets.job_outputs(_matrix([SEED]))
    rows = tmp_path / "sweep-rows.json"
    rows.write_text(shards.plan(outputs).rows_document())
    code, _, err = run_cli("results", "collect", tmp_path / "results", tmp_path / "rows",
                           "--allow-empty", "--output", tmp_path / "aggregate" / "results.json")
    assert code == 0, err
    code, out, err = run_cli("results", "check", tmp_path / "results", "--matrix", rows,
                             "--repo", REPO)
    assert code == 1
    assert "11" in out + err and "missing" in out + err


def test_an_eval_only_row_launches_alone_and_the_gate_requires_its_eval(tmp_path, run_cli):
    """An evals-only sweep's row (no throughput row to run after): the launch runs the GSM8K
    eval alone; `results check --matrix` asks for the eval, not for points, and still asks
    for it when the manifest claims it but its folder is gone."""
    from infersweep.changelog import shards

    outputs = buckets.job_outputs(_matrix([SEED], throughput=False))  # evals-only
    row = outputs["multinode-evals"][0]  # 1P1D, the eval at 128, no points
    outputs["multinode-evals"] = [row]
    rows = tmp_path / "sweep-rows.json"
    rows.write_text(shards.plan(outputs).rows_document())
    proc = _launch(row, tmp_path / "results" / "job")
    assert proc.returncode == 0, proc.stderr
    assert "the eval alone (eval-only row)" in proc.stderr
    [manifest] = (tmp_path / "results").rglob("manifest.json")
    m = json.loads(manifest.read_text())
    assert m["points"] == [] and m["complete"]
    assert m["eval"]["status"] == "present" and m["eval"]["n-samples"] == 33  # ceil(1319/40)

    def check():
        return run_cli("results", "check", tmp_path / "results", "--matrix", rows,
                       "--repo", REPO)

    code, out, err = check()
    assert code == 0, out + err
    code, out, err = run_cli("eval", "check", tmp_path / "results", "--scope", "job",
                             "--thresholds", REPO / "configs" / "eval-thresholds.yaml")
    assert code == 0, out + err
    (manifest.parent / m["eval"]["dir"] / "eval.json").unlink()  # the manifest still says present
    code, out, err = check()
    assert code == 1
    assert "eval-only row's eval; no job of the run has its eval folder" in out + err
