"""Launch overhead: `infersweep launch` from process start to the moment srtctl runs
`sbatch`, with a warm srt-slurm cache (target: under 3 s).

The upstream bundle under ../shared/reference/srt-slurm is the pinned remote (cloned bare into
a temporary folder); the cache entry is built once (not timed: fetch by SHA, venv, `pip
install -e`, needs PyPI). Each timed run then uses the shipped local-slurm fleet with an
`sbatch` stand-in first on the job's PATH that records the time it is called and fails, so no
Slurm is needed and nothing is submitted (the launch then ends with srtctl's error line, as
designed). Prints one JSON object.

    python benchmarks/perf/launch_overhead.py [--runs 5] [--cache DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.integration.slurm import launch_setup as ls  # noqa: E402
from tests.integration.slurm import srtctl_setup  # noqa: E402
from tests.integration.slurm.srtctl_setup import SYSTEM_PATH, write_recipe  # noqa: E402


class _Stub:
    """What the recipe builder reads from an installed srtctl: its recipes and a model dir."""

    def __init__(self, root: Path, model: Path):
        self.root, self.model = root, model

    def upstream_recipe(self, rel: str) -> dict:
        import yaml
        return yaml.safe_load((self.root / "recipes" / rel).read_text())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--cache", type=Path, default=None, help="keep the cache entry here")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="infersweep-launch-perf-"))
    remote = srtctl_setup.make_remote(work)
    cache = args.cache or work / "cache"
    lock = ls.write_lock(work / "runtimes.yaml", "file://" + remote.url, remote.pin)
    shim = work / "shim"
    shim.mkdir()
    stamp = work / "sbatch-called"
    (shim / "sbatch").write_text(f"#!/bin/sh\ndate +%s.%N > {stamp}\necho 'sbatch stand-in: "
                                 "not submitting' >&2\nexit 1\n")
    (shim / "sbatch").chmod(0o755)
    fleets = ls.write_fleets(work / "fleets.yaml", srtctl_setup.find_python312())
    import yaml
    data = yaml.safe_load(fleets.read_text())
    env_set = data["fleets"]["local-slurm"]["job-env"]["set"]
    env_set["PATH"] = f"{shim}:{env_set.get('PATH', SYSTEM_PATH)}"
    fleets.write_text(yaml.safe_dump(data, sort_keys=False))
    model = work / "model"
    model.mkdir()
    src = work / "peek"
    srtctl_setup.git("clone", "-q", "--no-checkout", remote.url, str(src))
    srtctl_setup.git("checkout", "-q", remote.pin, cwd=src)
    template = write_recipe(work / "t.yaml", ls.upstream_template(_Stub(src, model), 1))
    row = work / "row.json"
    row.write_text(json.dumps(ls.seed_row(1)))
    env = {**{k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV",)},
           "INFERSWEEP_CACHE": str(cache), "GITHUB_RUN_ID": "1", "GITHUB_RUN_ATTEMPT": "1",
           "RUNNER_NAME": "local-slurm_00", "RUNNER_TEMP": str(work / "runner-temp")}

    def launch(i: int) -> float | None:
        stamp.unlink(missing_ok=True)
        t0 = time.time()
        subprocess.run([sys.executable, "-m", "infersweep", "launch", "--row", str(row),
                        "--fleet", "local-slurm", "--fleets", str(fleets), "--lock", str(lock),
                        "--template", str(template), "--repo", str(REPO),
                        "--output", str(work / f"out{i}")], env=env, capture_output=True,
                       cwd=work)
        return float(stamp.read_text()) - t0 if stamp.exists() else None

    t0 = time.monotonic()
    cold = launch(0)
    cold_total = time.monotonic() - t0
    warm = [launch(i) for i in range(1, args.runs + 1)]
    ok = [w for w in warm if w is not None]
    print(json.dumps({
        "cold_start_to_sbatch_s": round(cold, 2) if cold else None,
        "cold_launch_total_s": round(cold_total, 1),
        "warm_start_to_sbatch_s": [round(w, 3) for w in ok],
        "warm_median_s": round(statistics.median(ok), 3) if ok else None,
        "runs": args.runs,
    }, indent=2))


if __name__ == "__main__":
    main()
