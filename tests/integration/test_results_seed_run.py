"""`infersweep results` on a real local sweep of the seed config: process, collect and check
pass on the full run; check fails, naming the point, when one point's file is removed or one
request is marked failed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.livecatalog import frozen_checkout

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
KEY = "dsv4-fp4-mi355x-atom-disagg"
ONE = "mi355x-atom-dsv4-disagg-1p1d-tp8-8k1k"
TWO = "mi355x-atom-dsv4-disagg-2p1d-dpa-tp8-8k1k"


def infersweep(*args, env=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "infersweep", *map(str, args)], cwd=REPO,
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, **(env or {})})


@pytest.fixture(scope="module")
def seed_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("seed") / "run"
    done = infersweep("sweep", "run", "--repo", frozen_checkout(), "--config-keys", KEY,
                      "--scale-down", "20", "--output", out)
    assert done.returncode == 0, done.stdout + done.stderr
    return out


def copy_of(run: Path, tmp_path: Path) -> Path:
    dest = tmp_path / "run"
    shutil.copytree(run, dest)
    return dest


def test_process_collect_check_pass_on_the_full_run(seed_run, tmp_path):
    done = infersweep("results", "process", seed_run, "--output", tmp_path / "rows")
    assert done.returncode == 0, done.stderr
    rows = sorted((tmp_path / "rows" / KEY).glob("*.row.json"))
    assert len(rows) == 11
    done = infersweep("results", "collect", seed_run, "--output", tmp_path / "agg.json")
    assert done.returncode == 0, done.stderr
    agg = json.loads((tmp_path / "agg.json").read_text())
    assert [(r["recipe_name"], r["conc"]) for r in agg["rows"]] == (
        [(ONE, c) for c in (4, 8, 16, 32, 64, 128)]
        + [(TWO, c) for c in (256, 512, 768, 1024, 2048)])
    for r in agg["rows"]:
        gpus = (8, 8) if r["recipe_name"] == ONE else (16, 8)
        assert (r["num_prefill_gpu"], r["num_decode_gpu"]) == gpus
        assert r["tput_per_gpu"] == pytest.approx(r["total_token_throughput"] / sum(gpus))
        assert r["median_intvty"] == pytest.approx(1 / r["median_tpot"])
        assert r["completed"] == r["requested"] == r["conc"] and r["power_valid"] == 0
    assert (tmp_path / "agg.csv").read_text().count("\n") == 12
    summary = tmp_path / "summary.md"
    done = infersweep("results", "check", tmp_path / "agg.json",
                      env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert done.returncode == 0, done.stdout + done.stderr
    assert "passed, 11 of 11 expected point(s) complete" in done.stdout
    assert "the run is stageable" in summary.read_text()


def test_check_fails_naming_a_point_whose_file_was_removed(seed_run, tmp_path):
    run = copy_of(seed_run, tmp_path)
    (run / KEY / ONE / "logs" / "fixed-seq" / f"{ONE}-c16.json").unlink()
    done = infersweep("results", "check", run, "--output-format", "github")
    assert done.returncode == 1
    assert f"{KEY} {ONE} c=16: unusable:" in done.stdout
    assert "does not exist" in done.stdout
    assert "::error file=" in done.stdout and "10 of 11 expected" in done.stdout
    assert "Traceback" not in done.stdout + done.stderr


def test_check_fails_naming_a_point_with_a_failed_request(seed_run, tmp_path):
    run = copy_of(seed_run, tmp_path)
    path = run / KEY / TWO / "logs" / "fixed-seq" / f"{TWO}-c512.json"
    data = json.loads(path.read_text())
    data["completed"] -= 1
    data["failed"] = 1
    path.write_text(json.dumps(data))
    done = infersweep("results", "check", run, "--format", "json")
    assert done.returncode == 1
    report = json.loads(done.stdout)
    assert report["ok"] is False and report["complete"] == 10
    assert {(p["kind"], p["point"]) for p in report["problems"]} == {
        ("short", f"{KEY} {TWO} c=512"), ("failed", f"{KEY} {TWO} c=512")}


def test_check_against_the_matrix_names_the_points_of_a_row_that_never_ran(seed_run, tmp_path):
    run = copy_of(seed_run, tmp_path)
    shutil.rmtree(run / KEY / TWO)
    matrix = tmp_path / "matrix.json"
    done = infersweep("matrix", "test-config", "--config-keys", KEY)
    matrix.write_text(done.stdout)
    assert infersweep("results", "check", run).returncode == 0   # the folder alone cannot tell
    done = infersweep("results", "check", run, "--matrix", matrix)
    assert done.returncode == 1
    for c in (256, 512, 768, 1024, 2048):
        assert f"2p-tp8-dpa+1d-tp8-dpa 8192/1024 c={c}: missing" in done.stdout
    assert "6 of 11 expected point(s) complete" in done.stdout
