"""Disaggregated rows through the real srtctl on the local Slurm: 1P1D on two nodes, 2P1D on
three, each worker TP8 on a node's eight GPUs, the SGLang router in front (all doubles for the
engine; srtctl's own NATS/etcd start for real from Debian's binaries)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from infersweep.rowjobs.slurm import SlurmWatcher
from infersweep.rowjobs.slurm_state import State
from tests.integration.slurm.srtctl_setup import bench_command, disagg_sglang_recipe, write_recipe

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("prefill, nodes", [(1, 2), (2, 3)], ids=["1p1d", "2p1d"])
def test_disagg_row_completes_and_is_collected(srtctl, tmp_path, prefill, nodes):
    recipe = write_recipe(tmp_path / "pd.yaml", disagg_sglang_recipe(
        srtctl, name=f"infersweep-{prefill}p1d", prefill_workers=prefill, decode_workers=1,
        command=bench_command(concurrency=8, prompts=24)))
    res = srtctl.apply(recipe)
    assert res.returncode == 0 and res.record["status"] == "submitted", res.stderr[-3000:]
    job = res.record["slurm_job_id"]
    out = Path(res.record["output_dir"])

    final = SlurmWatcher(interval=1, max_interval=5).wait([job], timeout=300)
    assert final[job].state is State.COMPLETED, (out / "logs" / f"sweep_{job}.log").read_text()[-4000:]

    alloc = srtctl.cluster.run("scontrol", "-o", "show", "job", job).stdout \
        if not srtctl.cluster.accounting else \
        srtctl.cluster.run("sacct", "-X", "-n", "-P", "-o", "NNodes,AllocTRES", "-j", job).stdout
    assert f"gres/gpu={8 * nodes}" in alloc, alloc
    logs = out / "logs"
    assert len(list(logs.glob("*_prefill_w*.out"))) == prefill
    assert len(list(logs.glob("*_decode_w*.out"))) == 1
    router = next(logs.glob("*_router_0.out")).read_text()
    assert router.count("http://127.0.0.1:") == prefill + 1, router
    result = json.loads((logs / "infersweep" / "conc8.json").read_text())
    assert result["completed"] == 24 and result["failed"] == 0
