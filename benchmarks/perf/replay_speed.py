"""What executing the workflows costs over running the same sweep directly.

Two ways to run the seed pull request's sweep (the 1P1D and 2P1D rows of
dsv4-fp4-mi355x-atom-disagg, scaled down by the local fleet's 40, both evals), measured in the
same session on the same machine:

- **direct**: `infersweep sweep run --scale-down 40` in one process (the peer);
- **replayed**: run-sweep.yml executed by act (policy, check, setup, the canary, the shard's
  two rows, collect) through the local fleet, as `tests/integration/workflows` and
  `infersweep replay` run it: a git sandbox, a job per row, each with its own checkout and
  `pip install`, artifacts uploaded and downloaded.

Needs act (the test extra), node, and ../shared (action trees, the srt-slurm bundle).

    python benchmarks/perf/replay_speed.py --runs 2
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

from infersweep.replay.actions import unpack_actions  # noqa: E402
from infersweep.replay.runner import find_act, run_act  # noqa: E402
from infersweep.replay.sandbox import GitSandbox, snapshot_worktree  # noqa: E402
from infersweep.replay.toolcache import project_dependencies, python_toolcache  # noqa: E402
from tests.integration.workflows.conftest import ACTIONS  # noqa: E402
from tests.integration.workflows.sweep_pr import (  # noqa: E402
    RUNNER_LABELS,
    SEED,
    WORKFLOW,
    open_pr,
)

SCALE_DOWN = "40"  # the local fleet's (configs/fleets.yaml)


def direct(tmp: Path) -> float:
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "infersweep", "sweep", "run", "--repo",
                           str(REPO), "--config-keys", SEED, "--scale-down", SCALE_DOWN,
                           "--output", str(tmp / "direct")], capture_output=True, text=True)
    wall = time.monotonic() - start
    if done.returncode:
        sys.exit(f"sweep run failed:\n{done.stderr[-3000:]}")
    return wall


def replayed(tmp: Path, trees, toolcache) -> tuple[float, dict]:
    worktree = tmp / "worktree"
    snapshot_worktree(REPO, worktree, message="base: the working tree")
    sandbox = GitSandbox(tmp / "github")
    pr = open_pr(worktree, sandbox, tmp)
    start = time.monotonic()
    run = run_act(WORKFLOW, "pull_request", pr.event, repo_dir=pr.pr.clone, env=sandbox.env(),
                  artifact_dir=tmp / "artifacts", trees=trees, toolcache=toolcache,
                  log_path=tmp / "act.jsonl", timeout=1800, act=find_act(),
                  runner_labels=RUNNER_LABELS, echo=lambda line: None)
    wall = time.monotonic() - start
    if not run.ok:
        sys.exit(f"the replay failed: see {run.log_path}")
    return wall, run.log.results()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=2)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="replay-speed-") as scratch:
        root = Path(scratch)
        t0 = time.monotonic()
        toolcache = python_toolcache(root / "toolcache",
                                     preinstall=project_dependencies(REPO / "pyproject.toml"))
        trees = unpack_actions(ACTIONS, root / "trees")
        print(f"tool cache and action trees, once: {time.monotonic() - t0:.1f} s")
        rows = []
        for i in range(args.runs):
            d = direct(Path(tempfile.mkdtemp(dir=root)))
            r, results = replayed(Path(tempfile.mkdtemp(dir=root)), trees, toolcache)
            rows.append((d, r))
            print(f"run {i + 1}: direct {d:.1f} s, replayed {r:.1f} s ({r / d:.1f}x), "
                  f"{len(results)} jobs")
        d = statistics.median(x for x, _ in rows)
        r = statistics.median(y for _, y in rows)
        print(f"median: direct {d:.1f} s, replayed {r:.1f} s, ratio {r / d:.1f}x")


if __name__ == "__main__":
    main()
