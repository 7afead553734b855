"""The local sweep of the seed config with its GSM8K evals: both rows run the eval against the
simulator's answer mode after their throughput points, and the sweep's one-line verdict
follows the eval gate (stageable at 96 % simulated accuracy, not at 85 %); stalled eval
answers are retried and counted."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from infersweep.rowjobs import manifest as manifests
from tests.conftest import FROZEN_MASTER, FROZEN_RUNNERS
from tests.livecatalog import frozen_checkout

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
SHARED_GSM8K = REPO.parent / "shared" / "data" / "gsm8k"
KEY = "dsv4-fp4-mi355x-atom-disagg"
ROWS = ("mi355x-atom-dsv4-disagg-1p1d-tp8-8k1k", "mi355x-atom-dsv4-disagg-2p1d-dpa-tp8-8k1k")


def _data_args() -> list[str]:
    """The standard GSM8K files where present; else the sweep writes its own small set."""
    if (SHARED_GSM8K / "test.jsonl").is_file() and (SHARED_GSM8K / "train.jsonl").is_file():
        return ["--eval-data", str(SHARED_GSM8K)]
    return []


@pytest.mark.parametrize(("accuracy", "stall", "code", "verdict"), [
    ("0.96", "0", 0, "stageable: yes — 11/11 points, evals pass (2)"),
    ("0.85", "0.1", 1, "stageable: no — 11/11 points, eval below threshold"),
])
def test_seed_sweep_runs_both_evals_and_gates_on_them(tmp_path, accuracy, stall, code, verdict):
    out = tmp_path / "out"
    env = {**os.environ, "INFERSWEEP_EVAL_ACCURACY": accuracy,
           "INFERSWEEP_EVAL_STALL_RATE": stall}
    env.pop("GITHUB_STEP_SUMMARY", None)
    proc = subprocess.run(
        [sys.executable, "-m", "infersweep", "sweep", "run", "--repo", str(frozen_checkout()),
         "--config-files", str(FROZEN_MASTER),
         "--runner-config", str(FROZEN_RUNNERS),
         "--config-keys", KEY, "--scale-down", "20", "--output", str(out), *_data_args()],
        capture_output=True, text=True, timeout=900, env=env)
    assert "Traceback" not in proc.stderr
    assert proc.returncode == code, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert proc.stdout.splitlines()[-1] == verdict
    retries = 0
    for name in ROWS:
        job = out / KEY / name
        m = manifests.load(job / manifests.FILENAME)
        assert m["complete"]
        ev = m["eval"]
        assert ev["status"] == "present" and ev["dir"] == "logs/fixed-seq/eval"
        assert ev["n-samples"] == 66  # ceil(1319 / 20) problems at --scale-down 20
        assert ev["failed"] == 0
        saved = json.loads((job / ev["dir"] / "eval.json").read_text())
        assert ev["scores"]["strict-match"] == saved["scores"]["strict-match"]["exact_match"]
        low = float(accuracy) < 0.91
        assert (min(ev["scores"].values()) < 0.91) is low
        retries += ev["retries"]
        # joinable to the job's benchmark rows: the job's provenance and the row's eval-conc
        prov = saved["provenance"]
        assert (prov["config-key"], prov["job-id"], prov["run-id"], prov["attempt"]) == (
            KEY, m["provenance"]["job-id"], m["provenance"]["run-id"], 1)
        assert prov["conc"] == json.loads((job / "row.json").read_text())["eval-conc"]
    if float(stall) > 0:
        assert retries > 0
        assert "below the threshold 0.91" in proc.stderr
    else:
        assert retries == 0


def test_an_evals_only_sweep_runs_the_eval_alone_gates_and_stages_it(tmp_path):
    """`--evals-only`: the row has no points; its job starts the server and runs the GSM8K eval
    alone, the manifest is complete with the eval present, the gate judges it, and `--stage`
    stores the eval (no point) and shows it in the report."""
    from infersweep.store import open_store

    out, db, site = tmp_path / "out", tmp_path / "store.db", tmp_path / "site"
    env = {**os.environ}
    env.pop("GITHUB_STEP_SUMMARY", None)
    proc = subprocess.run(
        [sys.executable, "-m", "infersweep", "sweep", "run", "--repo", str(frozen_checkout()),
         "--config-files", str(FROZEN_MASTER), "--runner-config", str(FROZEN_RUNNERS),
         "--config-keys", KEY, "--evals-only", "--conc", "128", "--scale-down", "40",
         "--output", str(out), "--stage", "--db", str(db), "--site", str(site),
         *_data_args()],
        capture_output=True, text=True, timeout=600, env=env)
    assert "Traceback" not in proc.stderr
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "the eval alone (eval-only row, c=128)" in proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[-4] == "stageable: yes — 0/0 points, evals pass (1)"
    assert lines[-3].startswith("staged run ") and "0 point(s) inserted" in lines[-3]
    assert "1 eval(s) inserted" in lines[-3]
    [path] = out.rglob(manifests.FILENAME)
    m = manifests.load(path)
    assert m["points"] == [] and m["complete"]
    assert m["eval"]["status"] == "present" and m["eval"]["n-samples"] == 33  # ceil(1319/40)
    recipe = (path.parent / "recipe.yaml").read_text()
    assert "eval gsm8k" in recipe and "bench serve" not in recipe
    with open_store(str(db)) as store:
        (staged,) = store.staged_runs()
    assert staged.points == [] and len(staged.evals) == 1
    page = (site / "runs" / f"{staged.run_id}-1.html").read_text()
    assert "gsm8k" in page


def test_an_eval_only_job_without_its_eval_is_incomplete():
    """The eval is all an eval-only job runs: without it the manifest names the problem (and
    `sweep run` and `launch` exit 1), whatever the job's state."""
    m = {"name": "r", "provenance": {"config-key": KEY, "job-id": "local-1",
                                     "job-state": "COMPLETED", "job-reason": None},
         "points": [], "unexpected-files": [],
         "eval": {"dir": "logs/fixed-seq/eval", "status": "missing"}}
    assert manifests.problems(m) == [
        f"{KEY} r (job local-1): eval missing: the eval is all an eval-only job runs "
        "(logs/fixed-seq/eval)"]
    assert manifests.problems({**m, "eval": {**m["eval"], "status": "present"}}) == []
