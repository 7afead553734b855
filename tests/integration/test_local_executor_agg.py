"""Aggregated recipes on the local executor, end to end: one SGLang worker with four DP ranks
(no router), and two workers behind the simulator's router in its aggregated mode."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from infersweep.recipe import workload
from infersweep.recipe.rendered import Rendered
from infersweep.rowjobs.executor import JobState, Provenance
from infersweep.rowjobs.local import SPEC_FILE, LocalExecutor
from tests.integration.test_sweep_run import owned_processes

pytestmark = pytest.mark.integration

MODEL = "org/agg-model"
PROV = Provenance("agg-key", "img", None, None, "run-agg", 1)


def rendered(executor: LocalExecutor, workdir: Path, name: str, resources: dict,
             frontend: dict, sglang: dict) -> Rendered:
    work = workload.Workload(model=MODEL, isl=64, osl=8, range_ratio=0.8, concs=(4, 16),
                             prompts_per_conc=4, warmups_per_conc=1)
    opts = executor.render_options(workdir)
    recipe = {
        "name": name,
        "model": {"path": MODEL, "container": "sglang-image", "precision": "fp8"},
        "resources": {"gpu_type": "mi355x", "gpus_per_node": 8, **resources},
        "slurm": {"time_limit": "00:10:00"},
        "frontend": {"enable_multiple_frontends": False, **frontend},
        "backend": {"type": "sglang", "sglang_config": {"aggregated": sglang},
                    "aggregated_environment": {"AGG_ONLY": "1"}},
        "benchmark": {"type": "custom",
                      "command": workload.command(work, name, client=opts.client,
                                                  result_dir=opts.result_dir)},
    }
    return Rendered(recipe, Path("hand-written.yaml"), "hand-written.yaml", work,
                    work.points(name))


def run_to_the_end(executor: LocalExecutor, r: Rendered, workdir: Path) -> dict:
    job = executor.submit(r, {"model": MODEL}, workdir, provenance=PROV)
    state = job.wait(time.monotonic() + 180)
    log = (workdir / "logs" / "benchmark.log")
    assert state is JobState.COMPLETED, (job.reason(), log.read_text()[-3000:]
                                         if log.exists() else "")
    m = job.collect()
    assert m["complete"] and m["provenance"]["job-state"] == "COMPLETED"
    assert [p["conc"] for p in m["points"]] == [4, 16]
    for p in m["points"]:
        assert p["status"] == "present" and p["completed"] == p["requested"] >= p["conc"]
        assert p["failed"] == 0
    assert owned_processes(workdir) == []
    return json.loads((workdir / SPEC_FILE).read_text())


def test_one_sglang_worker_with_four_dp_ranks_is_its_own_front_end(tmp_path):
    ex = LocalExecutor()
    r = rendered(ex, tmp_path, "sglang-agg-dp4",
                 {"agg_nodes": 1, "agg_workers": 1, "gpus_per_agg": 4},
                 {"type": "sglang"},
                 {"tensor-parallel-size": 4, "dp-size": 4, "enable-dp-attention": True,
                  "max-running-requests": 8, "context-length": 1024})
    spec = run_to_the_end(ex, r, tmp_path)
    (worker,) = spec["workers"]
    assert spec["router"] is None
    args = worker["args"]
    # two requests per rank: the 16-stream point queues at every rank and still completes
    assert args[args.index("--dp-size") + 1] == "4"
    assert args[args.index("--max-num-seqs") + 1] == "2"
    assert spec["engine_env"]["AGG_ONLY"] == "1"
    assert not (tmp_path / "logs" / "router.log").exists()


def test_two_agg_workers_run_behind_the_router(tmp_path):
    ex = LocalExecutor()
    r = rendered(ex, tmp_path, "sglang-agg-x2",
                 {"agg_nodes": 1, "agg_workers": 2, "gpus_per_agg": 4},
                 {"type": "sglang", "args": {"policy": "round_robin"}},
                 {"tensor-parallel-size": 4, "max-running-requests": 8,
                  "context-length": 1024})
    spec = run_to_the_end(ex, r, tmp_path)
    assert [w["role"] for w in spec["workers"]] == ["aggregated", "aggregated"]
    assert spec["router"] == {"args": ["--policy", "round-robin"]}
    logs = tmp_path / "logs"
    assert (logs / "aggregated-0.log").exists() and (logs / "aggregated-1.log").exists()
    assert "sim router on" in (logs / "router.log").read_text()
