"""Local sweep speed: wall and CPU time of `infersweep sweep run` on the seed config.

Runs the whole command in a fresh process (matrix expansion, rendering, every simulated
engine and client process, collection, the table) ``--runs`` times into temporary folders
and reports each run's wall time, the CPU time of the whole process tree, and the points
present. The target is the main job's: the 1P1D and 2P1D rows of the seed config, scaled
down, within 3 minutes on 2 cores.

    python benchmarks/perf/sweep_speed.py --scale-down 10 --runs 3
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def one_run(key: str, scale_down: str) -> dict:
    with tempfile.TemporaryDirectory(prefix="sweep-speed-") as tmp:
        out = Path(tmp) / "out"
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.monotonic()
        proc = subprocess.run(
            [sys.executable, "-m", "infersweep", "sweep", "run", "--repo", str(REPO),
             "--config-files", str(REPO / "configs" / "amd-master.yaml"),
             "--runner-config", str(REPO / "configs" / "runners.yaml"),
             "--config-keys", key, "--scale-down", scale_down, "--output", str(out)],
            capture_output=True, text=True, cwd=tmp)
        wall = time.monotonic() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        present = expected = requests = 0
        for path in out.rglob("manifest.json"):
            m = json.loads(path.read_text())
            for p in m["points"]:
                expected += 1
                present += p["status"] == "present"
                requests += p["completed"] or 0
        return {"exit": proc.returncode, "wall_s": round(wall, 1),
                "cpu_s": round(after.ru_utime + after.ru_stime
                               - before.ru_utime - before.ru_stime, 1),
                "points": f"{present}/{expected}", "requests": requests}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config-key", default="dsv4-fp4-mi355x-atom-disagg")
    ap.add_argument("--scale-down", default="10")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    runs = [one_run(args.config_key, args.scale_down) for _ in range(args.runs)]
    for i, r in enumerate(runs, 1):
        print(f"run {i}: {json.dumps(r)}")
    walls = [r["wall_s"] for r in runs]
    print(f"wall median {statistics.median(walls):.1f} s, max {max(walls):.1f} s "
          f"over {len(runs)} run(s)")
    return 0 if all(r["exit"] == 0 for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
