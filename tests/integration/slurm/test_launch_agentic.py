"""`infersweep launch` of one single-node agentic-coding row through the real srtctl on the
local Slurm: the job's benchmark step replays the traces with the pinned client (its venv,
local traces and tokenizer reach the job through the fleet's environment) and the manifest
shows the point present, judged by the agentic gates."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from infersweep.rowjobs.localagentic import AgenticLocal
from tests.agenticclient import client_venv
from tests.integration.slurm import launch_setup as ls
from tests.integration.slurm.test_launch import kit, manifest_of  # noqa: F401 (fixture)

pytestmark = pytest.mark.integration
KEY = "dsv4-fp4-mi355x-sglang-agentic"
# srt-slurm's SGLang router double speaks P/D only; the vLLM agentic default serves the row
# with `vllm serve` itself (its own front end), which the engine double stands in for
VLLM_DEFAULT = ls.REPO / "benchmarks/single_node/srt-slurm/agentic/defaults/vllm.yaml"
SCALE_DOWN = "180"  # the 3,600 s window replayed in 20 s


def agentic_row(conc: int) -> dict:
    out = subprocess.run([sys.executable, "-m", "infersweep", "matrix", "test-config",
                          "--config-keys", KEY, "--conc", str(conc)], capture_output=True,
                         text=True, cwd=ls.REPO, check=True).stdout
    row = next(r for r in json.loads(out) if r["kv-offloading"] == "none")
    return {**row, "config-key": KEY}


def test_agentic_row_replays_on_the_local_slurm(kit, tmp_path):  # noqa: F811
    venv = client_venv()
    local = AgenticLocal(tmp_path / "agentic", client_venv=venv).env()
    env = ls.launcher_env(kit.cache, kit.cluster, RUNNER_TEMP=str(tmp_path / "runner-temp"),
                          **local)
    row_file = tmp_path / "row.json"
    row_file.write_text(json.dumps(agentic_row(4)))
    argv = [sys.executable, "-m", "infersweep", "launch", "--row", str(row_file),
            "--fleet", "local-slurm", "--fleets", str(kit.fleets), "--lock", str(kit.lock),
            "--repo", str(ls.REPO), "--output", str(tmp_path / "out"),
            "--template", str(VLLM_DEFAULT), "--scale-down", SCALE_DOWN]
    p = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=tmp_path,
                       timeout=400)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-5000:]
    m = manifest_of(tmp_path / "out")
    assert m["complete"] is True and m["provenance"]["job-state"] == "COMPLETED"
    assert [(pt["conc"], pt["status"]) for pt in m["points"]] == [(4, "present")]
    assert m["provenance"]["config-key"] == KEY
    recipe = (next((tmp_path / "out").rglob("manifest.json")).parent / "recipe.yaml").read_text()
    assert "agentic replay" in recipe and "enable-prefix-caching: true" in recipe
    result = next((tmp_path / "runner-temp").rglob("*-c4.agentic.json"))
    data = json.loads(result.read_text())
    assert data["conc"] == 4 and data["num_requests_successful"] > 0
