"""run-sweep.yml executed by act for the pull request of test_run_sweep.py (labeled
full-sweep-fail-fast, one changelog entry selecting the seed config), with its benchmark job on
the `local-slurm` fleet: a runner named local-slurm_01 runs runners/launch_local-slurm.sh,
i.e. `infersweep launch --fleet local-slurm`, which fetches upstream srt-slurm v1.0.68 from
the git sandbox at the re-pinned commit (inside the job, through the sandbox's rewrite),
installs it into its cache and submits the row with the real `srtctl apply` to the local Slurm
cluster (scripts/slurm-local-cluster), with the test doubles of tests/integration/slurm/.

Only what the canary needs runs (act's ``-j canary-multi-node`` runs the job with its needs:
policy, check, setup, the canary). The shards are left out: one holds the 2P1D row, which the
fleet's one (1P1D) template does not fit, and both rows carry the GSM8K eval, which the engine
double (the simulator without an answer key) cannot pass; test_run_sweep.py runs them and
collect on the local fleet.

The base commit carries the fleet's test data (sweep_pr.local_slurm_fleet): upstream srtctl
has no ATOM backend, so the local-slurm entry names an upstream SGLang 1P1D template (the one
tests/integration/slurm/test_launch.py launches) and puts CPython 3.12 on the job's PATH.

The canary runs scaled down by 10 (the test fleet's `scale-down`, as the local fleet has
one): 819/102 tokens, 4 requests, through srtctl, sbatch, the job's engines and our client
all the same. Timings are in docs/performance.md.

Skips like the Slurm tests where the cluster or the srtctl prerequisites are absent, and like
the workflow tests where act is (INFERSWEEP_REQUIRE_SLURM=1 / INFERSWEEP_REQUIRE_ACT=1 make
them fail).
"""

from __future__ import annotations

import json
import os
import subprocess
import zipfile

import pytest

from infersweep.replay.sandbox import GitSandbox
from tests.integration.slurm import srtctl_setup
from tests.integration.slurm.conftest import _absent
from tests.integration.slurm.localslurm import cluster_or_reason
from tests.integration.workflows.conftest import describe, run_in_sandbox
from tests.integration.workflows.sweep_pr import (
    UPSTREAM_PIN,
    WORKFLOW,
    local_slurm_fleet,
    open_pr,
)

pytestmark = pytest.mark.integration

RUNNER = "local-slurm_01"
CANARY = "canary-multi-node-1"
JOBS = {"Run Sweep/Decide": "success",
        "Run Sweep/Check configs, pins and changelog": "success",
        "Run Sweep/Build the sweep matrix": "success"}


def _ours(cluster) -> dict[str, str]:
    """Queued or running jobs a launch on RUNNER named: {id: name}."""
    out = cluster.run("squeue", "--noheader", "-o", "%i %j", check=False).stdout
    jobs = dict(line.split(None, 1) for line in out.splitlines() if len(line.split()) == 2)
    return {i: n for i, n in jobs.items() if n.startswith("infersweep-")
            and n.endswith(f"-{RUNNER}")}


@pytest.fixture(scope="session")  # session: checked before the session's act fixtures
def cluster():
    found, reason = cluster_or_reason()
    if found is None:
        _absent(reason)
    missing = srtctl_setup.missing_prerequisites()
    if missing:
        _absent("the real srtctl cannot run here: " + "; ".join(missing))
    return found


@pytest.fixture(scope="module")
def canary_run(cluster, act_executable, action_trees, python_tool_cache, worktree_repo,
               tmp_path_factory):
    """(run, pull request, work folder): policy, check, setup and the multi-node canary, the
    canary launched on local-slurm_01 with a cold srt-slurm cache of its own."""
    work = tmp_path_factory.mktemp("local-slurm-sweep")
    sandbox = GitSandbox(work / "github")
    python312 = srtctl_setup.find_python312()
    pr = open_pr(worktree_repo[0], sandbox, work,
                 base_files=local_slurm_fleet(work, python312))
    env = {"SLURM_CONF": str(cluster.conf), "INFERSWEEP_CACHE": str(work / "cache")}
    for name in srtctl_setup.NETWORK_ENV:  # pip, uv and srtctl's job reach PyPI this way
        if name in os.environ:
            env[name] = os.environ[name]
    if "SSL_CERT_FILE" not in env and srtctl_setup.SYSTEM_CA.is_file():
        env["SSL_CERT_FILE"] = str(srtctl_setup.SYSTEM_CA)  # uv does not read pip's setting
    before = set(_ours(cluster))
    run = None
    try:
        # -j runs the job with its needs: policy, check, setup, the canary
        run = run_in_sandbox(sandbox, WORKFLOW, "pull_request", pr.event,
                             repo_dir=pr.pr.clone, work=work, act=act_executable,
                             trees=action_trees, toolcache=python_tool_cache,
                             name="local-slurm", jobs="canary-multi-node", fleet="local-slurm",
                             env=env, timeout=1800)
    finally:
        if run is None or run.timed_out:  # the launcher may not have cancelled its job: by id
            for job_id in set(_ours(cluster)) - before:
                cluster.run("scancel", job_id, check=False)
    return run, pr, work


def _manifest(run) -> dict:
    """The manifest in the canary's artifact (act keeps it as ``<name>/<name>.zip``)."""
    folder = next(p for p in run.artifacts() if p.name == f"bmk_{CANARY}_1")
    with zipfile.ZipFile(folder / f"{folder.name}.zip") as zf:
        found = [n for n in zf.namelist() if n.endswith("manifest.json")]
        assert len(found) == 1, zf.namelist()
        return json.loads(zf.read(found[0]))


def _canary_jobs(run) -> dict:
    """The called workflow's benchmark job(s) of the canary (the calling job has no result)."""
    return {k: j for k, j in run.log.jobs.items()
            if k.startswith("Canary (multi-node)/Benchmark/")}


def test_the_canary_runs_through_srtctl_on_slurm_and_passes(canary_run, cluster):
    run, pr, work = canary_run
    assert run.ok, describe(run)
    results = run.log.results()
    for job, result in JOBS.items():
        assert results.get(job) == result, describe(run)
    assert [j.result for j in _canary_jobs(run).values()] == ["success"], describe(run)
    setup = run.log.job("setup").step("matrix").outputs
    assert setup["ref"] == pr.head_sha
    assert [e["id"] for e in json.loads(setup["canary-multi-node"])] == [CANARY]

    m = _manifest(run)
    assert m["complete"] is True, m
    assert [pt["conc"] for pt in m["points"]] == [4]  # the 1P1D row's lowest point
    assert m["scale-down"] == 10
    assert all(pt["status"] == "present" and pt["completed"] == pt["requested"]
               for pt in m["points"]), m["points"]
    prov = m["provenance"]
    assert prov["executor"] == "srt-slurm" and prov["job-state"] == "COMPLETED", prov
    assert prov["srt-slurm-commit"] == UPSTREAM_PIN
    assert m["gpus"] == {"prefill": 8, "decode": 8, "total": 16}
    job = str(prov["job-id"])
    name = f"infersweep-{prov['run-id']}-a{prov['attempt']}-{RUNNER}"
    if cluster.accounting:  # the job Slurm ran is the one the manifest names
        out = cluster.run("sacct", "-X", "-n", "-P", "-o", "JobName,State,ExitCode",
                          "-j", job).stdout.strip()
        assert out == f"{name}|COMPLETED|0:0", out
    assert job not in cluster.queued()
    # processed rows for collect
    assert f"rows_{CANARY}_1" in {p.name for p in run.artifacts()}


def test_the_launcher_fetched_srt_slurm_through_the_sandbox(canary_run):
    """The benchmark job's launcher built its cache entry from the sandbox's
    SemiAnalysisAI/srt-slurm (the git rewrite reached the step) at the re-pinned commit."""
    run, _, work = canary_run
    (job,) = _canary_jobs(run).values()
    text = "\n".join(job.output)
    assert f"srt-slurm {UPSTREAM_PIN[:12]}: fetching from https://github.com/" \
           "SemiAnalysisAI/srt-slurm" in text, text[-3000:]
    assert "checked out and installed" in text, text[-3000:]
    entry = work / "cache" / "srt-slurm" / UPSTREAM_PIN
    assert (entry / "ready.json").is_file()
    head = subprocess.run(["git", "-C", str(entry / "src"), "rev-parse", "HEAD"],
                          capture_output=True, text=True, check=True).stdout.strip()
    assert head == UPSTREAM_PIN
    # the srtctl root's bin/srun is the Pyxis double the fleet links (no container here)
    assert os.readlink(entry / "src" / "bin" / "srun").endswith(
        "tests/integration/slurm/doubles/srun")
