"""Fresh-process wall time of `infersweep results collect` and `results check` on a
synthetic run of N points (default 2,000: 200 jobs of 10 concurrencies, one client result
JSON per point, laid out as `sweep run` writes them). The issue's budget is 2 s for both.

    python benchmarks/perf/results_speed.py [--points 2000] [--runs 5]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests import resultsrun  # noqa: E402  (the same run builder the tests use)

CONCS = (4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048)


def build(root: Path, points: int) -> None:
    jobs = -(-points // len(CONCS))
    left = points
    for j in range(jobs):
        concs = CONCS[:min(len(CONCS), left)]
        left -= len(concs)
        resultsrun.write_job(root, resultsrun.disagg_row(concs), config_key=f"cfg-{j // 20:03d}",
                             name=f"recipe-{j:04d}")


def wall(cmd: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, cwd=REPO, check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        run, agg = Path(tmp) / "run", Path(tmp) / "agg.json"
        build(run, args.points)
        me = [sys.executable, "-m", "infersweep", "results"]
        collect = wall([*me, "collect", str(run), "--output", str(agg)], args.runs)
        check = wall([*me, "check", str(agg)], args.runs)
        check_run = wall([*me, "check", str(run)], args.runs)
    print(f"| step ({args.points} points, median of {args.runs}) | wall (s) |")
    print("|---|---|")
    print(f"| `results collect RUN` | {collect:.2f} |")
    print(f"| `results check AGGREGATE` | {check:.2f} |")
    print(f"| collect + check | {collect + check:.2f} |")
    print(f"| `results check RUN` (processes every point itself) | {check_run:.2f} |")


if __name__ == "__main__":
    main()
