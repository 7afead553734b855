"""Local Slurm chain timings: cluster start, srtctl install, a job's submit→complete (agg,
1P1D, 2P1D on the simulator), and the job watcher's cost (Slurm queries per poll).

Needs root and the local cluster (`scripts/slurm-local-cluster up`), the upstream bundle under
../shared/reference/srt-slurm and PyPI (the install step). Prints one JSON object.

    python benchmarks/perf/slurm_local.py [--cycle-cluster] [--jobs 3] [--watch-jobs 24]

``--cycle-cluster`` also times `down` and a cold `up` (it stops the running cluster first).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from infersweep.rowjobs.slurm import SlurmWatcher  # noqa: E402
from tests.integration.slurm import srtctl_setup  # noqa: E402
from tests.integration.slurm.localslurm import SCRIPT, cluster_or_reason  # noqa: E402


def timed(argv: list[str]) -> float:
    t0 = time.monotonic()
    subprocess.run(argv, check=True, capture_output=True)
    return time.monotonic() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cycle-cluster", action="store_true")
    ap.add_argument("--jobs", type=int, default=3, help="srtctl jobs submitted one after another")
    ap.add_argument("--watch-jobs", type=int, default=24, help="jobs watched at once")
    a = ap.parse_args()
    report: dict = {}
    if a.cycle_cluster:
        report["cluster_down_s"] = round(timed([str(SCRIPT), "down"]), 2)
        report["cluster_up_s"] = round(timed([str(SCRIPT), "up"]), 2)
    cluster, why = cluster_or_reason()
    if cluster is None:
        sys.exit(f"slurm_local: {why}")

    with tempfile.TemporaryDirectory(prefix="slurm-perf-") as tmp:
        work = Path(tmp)
        t0 = time.monotonic()
        remote = srtctl_setup.make_remote(work / "remote")
        report["remote_from_bundle_s"] = round(time.monotonic() - t0, 2)
        (work / "install").mkdir()
        s = srtctl_setup.install(remote, work / "install", cluster)
        report["srtctl_install_s"] = {k: round(v, 2) for k, v in s.timings.items()}
        report["python312"] = s.uv_note

        def recipe_for(topology: str, i: int) -> dict:
            command = srtctl_setup.bench_command()
            if topology == "agg":
                return srtctl_setup.agg_vllm_recipe(s, name=f"perf-agg-{i}", command=command)
            return srtctl_setup.disagg_sglang_recipe(
                s, name=f"perf-{topology}-{i}", prefill_workers=int(topology[0]),
                decode_workers=1, command=command)

        for topology in ("agg", "1p1d", "2p1d"):
            submits, completes = [], []
            for i in range(a.jobs):
                recipe = srtctl_setup.write_recipe(work / f"{topology}{i}.yaml",
                                                   recipe_for(topology, i))
                t0 = time.monotonic()
                res = s.apply(recipe)
                submits.append(time.monotonic() - t0)
                job = res.record["slurm_job_id"]
                final = SlurmWatcher(interval=0.5, max_interval=1).wait([job], timeout=300)
                completes.append(time.monotonic() - t0)
                assert final[job].succeeded, final[job]
            report[topology] = {"srtctl_apply_s": [round(x, 2) for x in submits],
                                "submit_to_completed_s": [round(x, 2) for x in completes]}

        jobs = [cluster.submit("sleep 2", "--nodes=1") for _ in range(a.watch_jobs)]
        w = SlurmWatcher(interval=0.5, max_interval=1)
        polls = 0
        real_poll = w.poll

        def counting_poll():
            nonlocal polls
            polls += 1
            return real_poll()

        w.poll = counting_poll
        t0 = time.monotonic()
        w.wait(jobs, timeout=600)
        report["watch"] = {"jobs": len(jobs), "polls": polls, "slurm_queries": w.queries,
                           "queries_per_poll": round(w.queries / polls, 3),
                           "seconds": round(time.monotonic() - t0, 1)}
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
