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
