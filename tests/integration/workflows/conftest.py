"""Fixtures for running the repository's workflows with a real act, offline
(infersweep/replay; the facts in ../shared/specs/act-local.md).

Session-wide, built once: the action trees unpacked from ../shared/reference/github-actions
(``action_trees``) and the Python tool cache setup-python finds (``python_tool_cache``). Per
test: a git sandbox standing in for github.com (``git_sandbox``), the working tree as a base
commit (``worktree_repo``) and ``replay``, which runs act with all of it.

Where act or the action tarballs are missing the tests skip and say what; with
INFERSWEEP_REQUIRE_ACT=1 (set by .ci/run) a missing act fails them, and with
INFERSWEEP_REQUIRE_SHARED=1 so does missing reference data.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from infersweep.replay.actions import unpack_actions
from infersweep.replay.runner import ActMissing, find_act, run_act
from infersweep.replay.sandbox import GitSandbox, snapshot_worktree
from infersweep.replay.toolcache import project_dependencies, python_toolcache
from tests import livecatalog
from tests.conftest import REPO, SHARED, shared_absent

ACTIONS = SHARED / "reference" / "github-actions"
ACT_VERSION = "0.2.89"
REQUIRE_ENV = "INFERSWEEP_REQUIRE_ACT"
REPOSITORY = "acme/infersweep"  # what the sandbox's github.com calls this repository


def act_absent(reason: str):
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"{reason} ({REQUIRE_ENV}=1: CI must provide it)")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def action_tarballs() -> Path:
    """../shared/reference/github-actions (GitHub's actions at the pinned commits)."""
    if not any(ACTIONS.glob("*.tar.gz")):
        shared_absent(f"the action tarballs ({ACTIONS}) are not present")
    return ACTIONS


@pytest.fixture(scope="session")
def act_executable() -> str:
    try:
        act = find_act()
    except ActMissing as exc:
        act_absent(str(exc))
    done = subprocess.run([act, "--version"], capture_output=True, text=True, check=False)
    if ACT_VERSION not in done.stdout:
        act_absent(f"act {ACT_VERSION} is needed (the facts these tests rely on were seen "
                   f"with it), {act} is {done.stdout.strip() or done.stderr.strip()!r}")
    if subprocess.run(["node", "--version"], capture_output=True, check=False).returncode:
        act_absent("node is not on PATH (act's host mode runs JavaScript actions with it)")
    return act


@pytest.fixture(scope="session")
def action_trees(action_tarballs, tmp_path_factory):
    return unpack_actions(action_tarballs, tmp_path_factory.mktemp("action-trees"))


@pytest.fixture(scope="session")
def replay_cache(tmp_path_factory) -> Path:
    """A cache folder laid out as `infersweep replay --cache-dir` expects (toolcache/)."""
    return tmp_path_factory.mktemp("replay-cache")


@pytest.fixture(scope="session")
def python_tool_cache(replay_cache):
    """This interpreter's Python where setup-python looks for it, the project's dependencies
    pre-installed into its shared base (about 30 s once; each job's `pip install .` then
    takes seconds); each job installs into an environment of its own
    (infersweep/replay/toolcache.py)."""
    return python_toolcache(replay_cache / "toolcache",
                            preinstall=project_dependencies(REPO / "pyproject.toml"))


@pytest.fixture(scope="session")
def worktree_repo(tmp_path_factory) -> tuple[Path, str]:
    """(a repository, its one commit): the working tree as it is on disk, so the workflows
    and commands under test are the ones being edited, committed or not."""
    path = tmp_path_factory.mktemp("worktree") / "repo"
    with livecatalog.copying_the_repository():
        snapshot_worktree(REPO, path, message="base: the working tree")
    livecatalog.freeze_tree(path)  # the frozen catalog: a config PR cannot change a test
    subprocess.run(["git", "-C", str(path), "commit", "-q", "-a", "--amend", "--no-edit",
                    "--no-verify"], check=True)
    sha = subprocess.run(["git", "-C", str(path), "rev-parse", "HEAD"], check=True,
                         capture_output=True, text=True).stdout.strip()
    return path, sha


# act 0.2.89 reads and writes its --local-repository cache from parallel matrix jobs without a
# lock, and now and then dies of it (nektos/act#6055, a fix not yet released): the run is lost
# before any step of ours ran wrong. Such a run is run once more in fresh folders.
ACT_CACHE_RACE = ("fatal error: concurrent map read and map write", "LocalRepositoryCache")


def _crashed_in_acts_cache_race(run) -> bool:
    if run.exit_code == 0 or run.timed_out:
        return False
    text = Path(run.log_path).read_text(errors="replace")
    return all(sign in text for sign in ACT_CACHE_RACE)


def run_act_past_its_cache_race(workflow, event_name, payload, *, artifact_dir: Path,
                                log_path: Path, **kwargs):
    """run_act, and once more in fresh folders (``…-again``) if act died of its cache race."""
    run = run_act(workflow, event_name, payload, artifact_dir=artifact_dir,
                  log_path=log_path, **kwargs)
    if not _crashed_in_acts_cache_race(run):
        return run
    print(f"act died of its --local-repository cache race (nektos/act#6055); log {log_path}; "
          "running it once more")
    again = log_path.with_name(f"{log_path.stem}-again")
    kwargs["work_dir"] = again.parent / f"{again.name}-act-work"
    return run_act(workflow, event_name, payload, artifact_dir=Path(f"{artifact_dir}-again"),
                   log_path=again.with_suffix(".jsonl"), **kwargs)


@pytest.fixture
def git_sandbox(tmp_path) -> GitSandbox:
    return GitSandbox(tmp_path / "github")


@pytest.fixture
def replay(act_executable, action_trees, python_tool_cache, git_sandbox, tmp_path):
    """``replay(workflow, event_name, payload, repo_dir=..., jobs=..., **kwargs)``: run_act
    with the session's trees and tool cache, the sandbox's git rewrite in every job, logs and
    artifacts under the test's tmp_path (the run's log is printed on failure by the test)."""
    runs = []

    def run(workflow, event_name, payload, *, repo_dir, name="run", env=None, timeout=900,
            **kwargs):
        result = run_act_past_its_cache_race(
            workflow, event_name, payload, repo_dir=repo_dir,
            env={**git_sandbox.env(), **(env or {})},
            artifact_dir=tmp_path / f"{name}-artifacts", trees=action_trees,
            toolcache=python_tool_cache, log_path=tmp_path / f"{name}.jsonl",
            timeout=timeout, act=act_executable, **kwargs)
        runs.append(result)
        return result

    return run


def describe(run) -> str:
    """What a failed assertion shows: each job's result, its errors and annotations, the tail
    of the output of its failed steps, and the log's path."""
    lines = [f"act exit {run.exit_code} after {run.seconds:.0f} s; log {run.log_path}"]
    for key, job in run.log.jobs.items():
        lines.append(f"  {job.result or 'unfinished'}: {key}")
        failed = [s for s in job.steps if s.result == "failure"]
        lines += [f"    failed step: {s.name.splitlines()[0] if s.name else s.id}"
                  for s in failed]
        lines += [f"    {a}" for a in job.annotations]
        lines += [f"    act: {e}" for e in job.errors]
        if failed:
            lines += [f"    | {out}" for out in job.output[-30:]]
    lines += [f"  {u}" for u in run.log.unparsed[-5:]]
    return "\n".join(lines)


def run_in_sandbox(sandbox: GitSandbox, workflow, event_name, payload, *, repo_dir, work,
                   act, trees, toolcache, name="run", env=None, timeout=900, **kwargs):
    """run_act with the session's trees and tool cache and the sandbox's git rewrite, its log
    and artifacts under ``work``; a benchmark job's runner is the local fleet's unless
    ``fleet`` says otherwise, and the catalog's runner labels run on this host."""
    from tests.integration.workflows.sweep_pr import RUNNER_LABELS

    kwargs.setdefault("runner_labels", RUNNER_LABELS)
    return run_act_past_its_cache_race(workflow, event_name, payload, repo_dir=repo_dir,
                                       env={**sandbox.env(), **(env or {})},
                                       artifact_dir=work / f"{name}-artifacts", trees=trees,
                                       toolcache=toolcache, log_path=work / f"{name}.jsonl",
                                       timeout=timeout, act=act, **kwargs)


@pytest.fixture(scope="session")
def seed_sweep(act_executable, action_trees, python_tool_cache, worktree_repo,
               tmp_path_factory):
    """(run, pull request): run-sweep.yml executed once for the session on the seed PR
    labeled full-sweep-fail-fast, through the local fleet; the staging tests use its
    artifacts."""
    from tests.integration.workflows.sweep_pr import WORKFLOW, open_pr

    work = tmp_path_factory.mktemp("seed-sweep")
    sandbox = GitSandbox(work / "github")
    pr = open_pr(worktree_repo[0], sandbox, work)
    run = run_in_sandbox(sandbox, WORKFLOW, "pull_request", pr.event, repo_dir=pr.pr.clone,
                         work=work, act=act_executable, trees=action_trees,
                         toolcache=python_tool_cache, name="seed", timeout=1200)
    run.sandbox = sandbox
    return run, pr


FAIL_EVERY_REQUEST = "--fail-rate 1"  # INFERSWEEP_SIM_ARGS: every simulated engine answers 500


def run_job_alone(sandbox: GitSandbox, run, job_id: str, event_name, payload, *, repo_dir,
                  work, act, trees, toolcache, needs=(), name=None, timeout=1500, **kwargs):
    """``job_id`` of run-sweep.yml run alone after ``run`` (sweep_pr.job_alone: no ``needs``,
    no ``if``, each ``needs.<job>.outputs.<name>`` of ``needs`` the value ``run`` gave it), over
    ``run``'s artifact folder: act numbers every run 1, so the job's download-artifact finds
    what ``run`` uploaded and its own uploads land beside them, as in one run on GitHub."""
    from tests.integration.workflows.sweep_pr import (
        RUNNER_LABELS,
        WORKFLOW,
        job_alone,
        job_outputs,
    )

    name = name or job_id
    workflow = Path(repo_dir) / WORKFLOW
    outputs = {need: job_outputs(run.log, workflow, need) for need in needs}
    copy = job_alone(workflow, job_id, work / "derived" / f"{name}.yml", needs_outputs=outputs)
    kwargs.setdefault("runner_labels", RUNNER_LABELS)
    return run_act(copy, event_name, payload, repo_dir=repo_dir, env=sandbox.env(),
                   artifact_dir=run.artifact_dir, trees=trees, toolcache=toolcache,
                   log_path=work / f"{name}.jsonl", timeout=timeout, act=act, **kwargs)


@pytest.fixture(scope="session")
def failed_sweep(act_executable, action_trees, python_tool_cache, worktree_repo,
                 tmp_path_factory):
    """(run, pull request): the seed PR labeled full-sweep-fail-fast, executed with every
    simulated engine answering HTTP 500 (INFERSWEEP_SIM_ARGS=--fail-rate 1): the canary's
    benchmark job (1P1D c4) fails. act 0.2.89 ends a run at a called workflow that failed:
    no shard and no collect job starts, ``if: always()`` or not. So collect is then run
    alone (``run.collect``, :func:`run_job_alone`) over the run's artifact folder, which then
    holds what the same run leaves on GitHub: sweep-rows, changelog-metadata, the canary's
    bmk_ artifact and collect's results_bmk with the failed gate's inputs. ``run.sandbox`` is
    the sandbox (a staging test serves ``run.artifacts()`` like seed_sweep's)."""
    from tests.integration.workflows.sweep_pr import WORKFLOW, open_pr

    work = tmp_path_factory.mktemp("failed-sweep")
    sandbox = GitSandbox(work / "github")
    pr = open_pr(worktree_repo[0], sandbox, work)
    run = run_in_sandbox(sandbox, WORKFLOW, "pull_request", pr.event, repo_dir=pr.pr.clone,
                         work=work, act=act_executable, trees=action_trees,
                         toolcache=python_tool_cache, name="failed",
                         env={"INFERSWEEP_SIM_ARGS": FAIL_EVERY_REQUEST}, timeout=1500)
    run.sandbox = sandbox
    run.collect = None
    if run.log.results().get("Run Sweep/Build the sweep matrix") == "success":
        run.collect = run_job_alone(sandbox, run, "collect", "pull_request", pr.event,
                                    repo_dir=pr.pr.clone, work=work, act=act_executable,
                                    trees=action_trees, toolcache=python_tool_cache,
                                    needs=("setup",))
    return run, pr


def pytest_collection_modifyitems(items):
    """An act run (and the session fixture it may build: the tool cache, a whole sweep) takes
    minutes on 2 cores, longer beside other work: past the suite's 600 s default per test.
    Each act run has its own, shorter timeout inside (run_act's ``timeout``)."""
    here = Path(__file__).parent
    for item in items:
        if Path(str(item.fspath)).is_relative_to(here) and \
                item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(1800))
