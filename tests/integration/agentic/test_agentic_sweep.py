"""A local agentic sweep, end to end: `sweep run` renders the SGLang agentic rows, the local
executor starts the simulator with the recipe's prefix cache, the pinned client replays a
folder of traces (`--traces`) for a scaled-down window, every point passes `results check`,
and `--stage` stores the run and rebuilds the report."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.agenticclient import VENV_ENV, client_venv
from tests.conftest import FROZEN_RUNNERS
from tests.livecatalog import frozen_checkout

pytestmark = pytest.mark.integration

DATA = Path(__file__).resolve().parents[2] / "data" / "agentic"
KEY = "dsv4-fp4-mi355x-sglang-agentic"
SCALE_DOWN = "180"  # a 20 s window and one warm-up request per lane


def _run(args: list[str], env: dict, timeout: float) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "infersweep", *args], capture_output=True,
                          text=True, env=env, timeout=timeout)


def test_an_agentic_sweep_replays_checks_and_stages(tmp_path):
    env = {**os.environ, VENV_ENV: str(client_venv())}
    traces = tmp_path / "traces"
    made = _run(["agentic", "traces", "generate", "--out", str(traces), "--traces", "6",
                 "--seed", "3", "--no-progress"], env, 60)
    assert made.returncode == 0, made.stderr
    out, db, site = tmp_path / "out", tmp_path / "store.db", tmp_path / "site"
    done = _run(["sweep", "run", "--repo", str(frozen_checkout()),
                 "--config-files", str(DATA / "sglang-agentic.yaml"),
                 "--runner-config", str(FROZEN_RUNNERS), "--config-keys", KEY,
                 "--scale-down", SCALE_DOWN, "--traces", str(traces), "--output", str(out),
                 "--stage", "--db", str(db), "--site", str(site)], env, 420)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "stageable: yes" in done.stdout
    results = sorted(out.glob(f"{KEY}/*/logs/*/*.agentic.json"))
    assert [r.parent.parent.parent.name.rsplit("-", 1)[-1] for r in results] == ["kvdram",
                                                                                "kvnone"]
    for path in results:
        r = json.loads(path.read_text())
        assert r["conc"] == 4 and r["num_requests_successful"] > 0
        # a local run says so, and is never publishable
        assert r["publishable"] is False and r["scaled"]["duration"] == {"original": 3600,
                                                                         "run": 20}
        # the replayed traces are the folder given, and the simulator's prefix cache was hit
        assert r["dataset"]["type"] == "weka_trace" or "weka" in json.dumps(r["dataset"])
        hit = r["server_metrics"]["server_gpu_cache_hit_rate"]
        assert hit is not None and hit > 0.3, r["server_metrics"]
        assert r["request_accounting"]["error_rate"] in (0, 0.0, None)
    check = _run(["results", "check", str(out)], env, 120)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "2 of 2 expected point(s) complete" in check.stdout
    assert (site / "index.html").is_file()
    # the report's agentic page shows both offload modes, labelled as local runs
    page = (site / "agentic.html").read_text()
    assert KEY in page  # the job's config key, from its manifest
    assert "dram/hicache" in page and "local, not publishable" in page
