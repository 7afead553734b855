"""`infersweep launch` through the real srtctl on the local Slurm: rows run to a manifest,
and every way a launch can fail says why, collects what exists and leaves no job behind."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from infersweep.rowjobs import checkout as checkouts
from infersweep.rowjobs.fleet import get_fleet
from tests.integration.slurm import launch_setup as ls
from tests.integration.slurm.conftest import wait_until
from tests.integration.slurm.srtctl_setup import write_recipe
from tests.livecatalog import frozen_checkout

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
                "--lock", str(lock or self.lock), "--repo", str(frozen_checkout()),
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
    templates["agg"] = write_recipe(d / "vllm-agg.yaml", ls.upstream_agg_template(srtctl))
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
    env = ls.launcher_env(kit.cache, kit.cluster, RUNNER_TEMP=str(tmp_path / "runner-temp"))
    p = kit.run(tmp_path, ls.seed_row(prefill), template=template, env=env)
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
    assert prov["config-key"] == ls.SEED_KEY  # the catalog key, not the row's exp-name
    assert m["gpus"] == {"prefill": 8 * prefill, "decode": 8, "total": 8 * (prefill + 1)}
    job = prov["job-id"]
    # named and tagged with run, attempt and runner
    row_dir = next((tmp_path / "out").rglob("manifest.json")).parent
    assert "comment: infersweep:run_id=7001,attempt=1,runner=local-slurm_00" in \
        (row_dir / "recipe.yaml").read_text()
    if kit.cluster.accounting:
        name = kit.cluster.run("sacct", "-X", "-n", "-P", "-o", "JobName", "-j", job).stdout
        assert name.strip() == "infersweep-7001-a1-local-slurm_00"
    # the job's environment is the fleet's, not the launcher's (which has VIRTUAL_ENV set)
    script = next((tmp_path / "runner-temp").rglob(f"outputs/{job}/sbatch_script.sh"))
    assert "/nonexistent" not in script.read_text()
    # nothing written into the checkout the launcher ran from
    assert not (REPO / "outputs").exists() and not (frozen_checkout() / "outputs").exists()
    assert job not in kit.cluster.queued()
    # a second launch re-uses the cache entry
    assert "re-used" in p.stdout + p.stderr


@pytest.mark.parametrize("conc", [4, [2, 4, 8]], ids=["one-point", "grouped"])
def test_single_node_row_runs_as_one_aggregated_job(kit, tmp_path, conc):
    env = ls.launcher_env(kit.cache, kit.cluster, RUNNER_TEMP=str(tmp_path / "runner-temp"))
    p = kit.run(tmp_path, ls.single_row(conc), template="agg", env=env)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-5000:]
    m = manifest_of(tmp_path / "out")
    concs = conc if isinstance(conc, list) else [conc]
    assert m["complete"] is True and [pt["conc"] for pt in m["points"]] == concs
    assert all(pt["status"] == "present" and pt["completed"] == pt["requested"]
               for pt in m["points"])
    assert m["provenance"]["config-key"] == ls.SINGLE_KEY
    assert m["provenance"]["job-state"] == "COMPLETED"
    job = m["provenance"]["job-id"]
    logs = next((tmp_path / "runner-temp").rglob(f"outputs/{job}/logs"))
    engines = sorted(x.name for x in logs.glob("*_agg_w*.out"))
    assert len(engines) == 1, engines  # one engine start for every point of the job
    recipe = (next((tmp_path / "out").rglob("manifest.json")).parent / "recipe.yaml").read_text()
    assert "agg_workers: 1" in recipe and "gpus_per_agg: 8" in recipe
    assert recipe.count(" bench serve") == len(concs)


def test_single_node_points_needing_two_servers_fail_before_sbatch(kit, tmp_path):
    p = kit.run(tmp_path, ls.single_row([32, 64]), template="agg", timeout=60)
    assert p.returncode == 1
    assert "[row-conc-settings]" in p.stderr
    assert not list((tmp_path / "out").rglob("sbatch_script.sh"))


def _ours(kit) -> set[str]:
    out = kit.cluster.run("squeue", "--noheader", "-o", "%i %j").stdout
    return {ln.split()[0] for ln in out.splitlines() if "infersweep-7001" in ln}


def test_failing_job_is_collected_and_fails(kit, tmp_path):
    bad = ls.upstream_template_from(kit.templates["1p1d"], served="not-the-row-model")
    p = kit.run(tmp_path, ls.seed_row(1), "--template", str(write_recipe(tmp_path / "t.yaml", bad)),
                template=None)
    assert p.returncode == 1, p.stderr[-3000:]
    m = manifest_of(tmp_path / "out")
    assert m["provenance"]["job-state"] == "FAILED" and m["complete"] is False
    assert "exit code" in m["provenance"]["job-reason"]
    assert "job ended FAILED" in p.stderr and "Traceback" not in p.stderr


def test_sigterm_cancels_its_job_and_collects(kit, tmp_path):
    env = ls.launcher_env(kit.cache, kit.cluster, RUNNER_TEMP=str(tmp_path / "runner-temp"))
    proc = kit.run(tmp_path, ls.seed_row(1, conc=(2, 16), osl=400), env=env, background=True)
    try:
        wait_until(lambda: any((tmp_path / "runner-temp").rglob("fixed-seq/*-c2.json")), 240,
                   "the first point's result file")
        job = next(iter(_ours(kit)))
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=200)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 143, err[-3000:]
    assert job not in kit.cluster.queued()
    m = manifest_of(tmp_path / "out")
    assert m["provenance"]["job-state"] == "CANCELLED"
    assert "the launcher received SIGTERM" in m["provenance"]["job-reason"]
    by = {pt["conc"]: pt for pt in m["points"]}
    assert by[2]["status"] == "present"
    assert by[16]["status"] != "present" and "cancelled" in by[16]["reason"]


def test_deadline_cancels_and_says_so(kit, tmp_path):
    p = kit.run(tmp_path, ls.seed_row(1, conc=(16,), osl=2000), "--timeout", "25")
    assert p.returncode == 1, p.stderr[-3000:]
    m = manifest_of(tmp_path / "out")
    assert m["provenance"]["job-state"] == "CANCELLED"
    assert "--timeout of 25 s expired" in m["provenance"]["job-reason"]
    assert m["provenance"]["job-id"] not in kit.cluster.queued()


def test_missing_point_fails_the_launch(kit, tmp_path):
    wrapper = tmp_path / "client-skipping-c4"
    wrapper.write_text("#!/bin/bash\n# test double: a client that writes nothing for c=4\n"
                       'if [[ " $* " == *" --max-concurrency 4 "* ]]; then exit 0; fi\n'
                       f'exec {sys.executable} -m infersweep "$@"\n')
    wrapper.chmod(0o755)
    fleets = ls.write_fleets(tmp_path / "fleets.yaml", kit_python312(kit), client=str(wrapper))
    kit2 = LaunchKit(**{**kit.__dict__, "fleets": fleets})
    p = kit2.run(tmp_path, ls.seed_row(1))
    assert p.returncode == 1, p.stderr[-3000:]
    m = manifest_of(tmp_path / "out")
    by = {pt["conc"]: pt for pt in m["points"]}
    assert m["provenance"]["job-state"] == "COMPLETED"
    assert by[2]["status"] == "present" and by[4]["status"] == "missing"
    assert "point c=4 missing" in p.stderr

    # the next attempt, given this manifest, runs only c=4 (with the real client)
    env = ls.launcher_env(kit.cache, kit.cluster, GITHUB_RUN_ATTEMPT="2")
    again = tmp_path / "again"
    again.mkdir()
    p = kit.run(again, ls.seed_row(1), "--previous-manifest", str(tmp_path / "out"), env=env)
    assert p.returncode == 0, p.stderr[-3000:]
    m2 = manifest_of(again / "out")
    by = {pt["conc"]: pt for pt in m2["points"]}
    assert m2["complete"] and m2["provenance"]["attempt"] == 2
    assert by[2]["attempt"] == 1 and by[4]["attempt"] == 2
    recipe = next((again / "out").rglob("recipe.yaml")).read_text()
    assert "--max-concurrency 4" in recipe and "--max-concurrency 2" not in recipe


def test_pinned_commit_missing_on_remote_fails_before_sbatch(kit, tmp_path):
    lock = ls.write_lock(tmp_path / "runtimes.yaml", "file://" + kit.remote.url, "deadbeef" * 5)
    before = _ours(kit)
    p = kit.run(tmp_path, ls.seed_row(1), lock=lock)
    assert p.returncode == 1
    assert "deadbeefdeadbeef" in p.stderr and "is not on" in p.stderr
    assert "Traceback" not in p.stderr and "srtctl apply" not in p.stdout + p.stderr
    assert _ours(kit) == before
    m = manifest_of(tmp_path / "out")
    assert m["provenance"]["job-id"] is None


def test_srtctl_printing_no_json_line(kit, tmp_path):
    # a cache entry whose setup check fails (bin/tachometer-scraper absent): srtctl exits 1
    # without a JSON line
    cache = tmp_path / "cache"
    src = kit.cache / "srt-slurm"
    entry = next(e for e in src.iterdir() if e.is_dir())
    shutil.copytree(entry, cache / "srt-slurm" / entry.name, symlinks=True,
                    ignore=shutil.ignore_patterns(".venv-compute"))
    (cache / "srt-slurm" / entry.name / "src" / "bin" / "tachometer-scraper").unlink()
    before = _ours(kit)
    p = kit.run(tmp_path, ls.seed_row(1), env=ls.launcher_env(cache, kit.cluster))
    assert p.returncode == 1
    assert "printed no JSON line" in p.stderr + p.stdout, p.stderr[-3000:]
    assert _ours(kit) == before
    assert manifest_of(tmp_path / "out")["provenance"]["job-id"] is None


def kit_python312(kit):
    from tests.integration.slurm.srtctl_setup import find_python312
    return find_python312()
