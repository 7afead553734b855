"""``infersweep replay``: run this repository's sweep workflow on this machine with act, as
GitHub would run it for a pull request (or a push, or a manual dispatch).

The user's repository is only read: its base and head commits are pushed into a sandbox of
bare repositories under the work folder (or, with ``--worktree``, a copy with the working tree
committed on top of the head), and act runs from a clone of the sandbox whose HEAD is what
GitHub's ``github.sha`` would be. See docs/replay.md.

The replayed head's code runs on this machine, as the user: act starts with an allow-listed
environment (:mod:`infersweep.replay.hostenv`), and names and paths that would leave the
sandbox are refused (:mod:`infersweep.replay.sandboxpaths`), but it is not an isolation.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
from pathlib import Path

import click

from infersweep.diagnostics import Diagnostic, InputError
from infersweep.replay.sandboxpaths import (
    SandboxPathError,
    repository_name,
    workflow_file,
    workflow_path,
)

DEFAULT_WORKFLOW = ".github/workflows/run-sweep.yml"
DEFAULT_LABEL = "full-sweep-fail-fast"
GITHUB_REMOTE = re.compile(r"github\.com[:/](?P<repo>[\w.-]+/[\w.-]+?)(?:\.git)?/?$")
RUNS_HERE = ("The replayed head's workflow steps run on this machine as you: they can read "
             "and write what your user can. act gets only an allow-listed environment "
             "(locale, PATH, certificates, proxies, pip's index settings) with HOME and "
             "TMPDIR inside the work folder and a dummy GITHUB_TOKEN; pass anything else "
             "with --env, --secret or --secret-file. Replay only code you would run yourself.")


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "infersweep" / "replay"


def _pairs(values: tuple[str, ...], option: str) -> dict[str, str]:
    out = {}
    for value in values:
        name, sep, rest = value.partition("=")
        if not sep or not name:
            raise click.BadParameter(f"{value!r} is not NAME=VALUE", param_hint=option)
        out[name] = rest
    return out


def _fail(message: str, hint: str = "") -> InputError:
    return InputError(Diagnostic("replay", 0, 0, message, hint, "replay"))


def _rev(repo: Path, rev: str, what: str) -> str:
    from infersweep.replay.sandbox import SandboxError, _git

    for candidate in (rev, f"origin/{rev}"):
        try:
            return _git("-C", str(repo), "rev-parse", "--verify", "--end-of-options",
                        f"{candidate}^{{commit}}")
        except SandboxError:
            continue
    raise _fail(f"{what} {rev!r} is not a commit of {repo}", "give a branch, tag or SHA")


def _branch_name(repo: Path, base: str) -> str:
    """The base branch's name: ``base`` when it names a branch (local or origin's), else
    ``main`` (a SHA or ``HEAD~1`` given as the base still gets a branch on the sandbox)."""
    from infersweep.replay.sandbox import SandboxError, _git

    for ref in (f"refs/heads/{base}", f"refs/remotes/origin/{base}"):
        try:
            _git("-C", str(repo), "show-ref", "--verify", "--quiet", ref)
            return base
        except SandboxError:
            continue
    return "main"


def _repository_name(repo: Path) -> str:
    from infersweep.replay.sandbox import SandboxError, _git

    try:
        url = _git("-C", str(repo), "remote", "get-url", "origin")
    except SandboxError:
        url = ""
    m = GITHUB_REMOTE.search(url)
    if m is not None:
        return m["repo"]
    return f"local/{re.sub(r'[^A-Za-z0-9_-]', '-', repo.resolve().name) or 'repo'}"


def catalog_labels(repo: Path) -> list[str]:
    """Every runner label of the repository's runners file: the labels a matrix row's
    benchmark job runs on, which no workflow names literally (they come from the rows)."""
    from infersweep.config.catalog import default_runner_file, load_runners

    path = default_runner_file(repo)
    return list(load_runners(path).labels) if path.is_file() else []


@click.command("replay", epilog=RUNS_HERE)
@click.option("--event", "event_name", type=click.Choice(["pull_request", "push",
                                                         "workflow_dispatch"]),
              default="pull_request", show_default=True, help="The event to replay.")
@click.option("--label", default=DEFAULT_LABEL, show_default=True,
              help="pull_request: the label the 'labeled' event adds (the PR's only label).")
@click.option("--base", default="main", show_default=True,
              help="The base branch (pull_request), the commit before (push) or the branch "
                   "dispatched on; a branch, tag or SHA of --repo-dir.")
@click.option("--head", default="HEAD", show_default=True,
              help="The PR's head, the pushed commit or the dispatched commit.")
@click.option("--worktree", is_flag=True,
              help="Replay the working tree (uncommitted changes too) as a commit on --head.")
@click.option("--repo-dir", type=click.Path(file_okay=False, exists=True, path_type=Path),
              default=".", show_default=True, help="The repository to replay.")
@click.option("--repository", default=None,
              help="OWNER/NAME the replay pretends to be [default: from origin's URL].")
@click.option("--pr-number", type=click.IntRange(min=1), default=1, show_default=True)
@click.option("--workflow", default=DEFAULT_WORKFLOW, show_default=True,
              help="The workflow file, relative to the repository.")
@click.option("--job", "jobs", multiple=True, help="Run only this job id (repeatable).")
@click.option("--input", "inputs", multiple=True, metavar="NAME=VALUE",
              help="workflow_dispatch input (repeatable).")
@click.option("--env", "envs", multiple=True, metavar="NAME=VALUE",
              help="Environment for every job (repeatable).")
@click.option("--secret", "secrets", multiple=True, metavar="NAME=VALUE",
              help="A secret (repeatable); GITHUB_TOKEN is set to a dummy by default.")
@click.option("--secret-file", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              default=None, help="Secrets as NAME=VALUE lines (act's dotenv format), kept "
                                 "off the command line.")
@click.option("--var", "variables", multiple=True, metavar="NAME=VALUE",
              help="A repository variable, vars.NAME (repeatable).")
@click.option("--runner-label", "runner_labels", multiple=True, metavar="LABEL[=PLATFORM]",
              help="A runs-on label to run on this host (repeatable); the workflow's literal "
                   "labels and every label of configs/runners.yaml are added by themselves.")
@click.option("--mirror", "mirrors", multiple=True, metavar="OWNER/REPO=PATH",
              help="Serve another repository from a local clone or git bundle (e.g. the "
                   "pinned srt-slurm where github.com cannot be reached); repeatable.")
@click.option("--fleet", default="local", show_default=True,
              help="RUNNER_NAME is <fleet>_01: the launcher a benchmark job runs.")
@click.option("--actions", "actions_dir", type=click.Path(file_okay=False, exists=True,
                                                          path_type=Path), default=None,
              help="A folder of action tarballs (<action>@<sha>.tar.gz): run offline. "
                   "Without it act fetches the actions from GitHub.")
@click.option("--workdir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Where the sandbox, logs and artifacts go [default: a new temporary folder].")
@click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="The Python tool cache and unpacked actions, kept between replays "
                   "[default: $XDG_CACHE_HOME/infersweep/replay].")
@click.option("--timeout", type=click.FloatRange(min=1), default=None,
              help="Stop act after this many seconds.")
def replay(event_name, label, base, head, worktree, repo_dir, repository, pr_number, workflow,
           jobs, inputs, envs, secrets, secret_file, variables, runner_labels, mirrors, fleet, actions_dir,
           workdir, cache_dir, timeout):
    """Replay a pull request (or push, or dispatch) through the workflow with act, offline
    with --actions; print each job's outcome and where the log and artifacts are.

    The head's code executes on this machine, as you (see below and docs/replay.md).

    Exits 1 when act reports a failure (or a timeout)."""
    from infersweep.replay import events
    from infersweep.replay.runner import ActMissing, find_act, run_act
    from infersweep.replay.sandbox import GitSandbox, SandboxError, _git, worktree_commit
    from infersweep.replay.toolcache import project_dependencies, python_toolcache

    input_map = _pairs(inputs, "--input")
    env_map, secret_map = _pairs(envs, "--env"), _pairs(secrets, "--secret")
    var_map = _pairs(variables, "--var")
    mirror_map = _pairs(mirrors, "--mirror")
    try:
        if repository is not None:
            repository_name(repository, "--repository")
        for name in mirror_map:
            repository_name(name, "--mirror")
        workflow_path(workflow)
    except SandboxPathError as exc:
        raise _fail(exc.message, exc.hint) from None
    if input_map and event_name != "workflow_dispatch":
        raise click.BadParameter("only workflow_dispatch takes inputs", param_hint="--input")
    try:
        find_act()
    except ActMissing as exc:
        raise _fail(str(exc), "pip install 'infersweep[replay]'") from None
    repo_dir = Path(_git("-C", str(repo_dir), "rev-parse", "--show-toplevel"))
    try:
        repository = repository or repository_name(_repository_name(repo_dir),
                                                   "--repository (from origin's URL)")
    except SandboxPathError as exc:
        raise _fail(exc.message, "pass --repository OWNER/REPO") from None
    click.echo(RUNS_HERE, err=True)
    workdir = (workdir or Path(tempfile.mkdtemp(prefix="infersweep-replay-"))).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    cache_dir = (cache_dir or _cache_dir()).resolve()
    base_sha = _rev(repo_dir, base, "--base")
    head_sha = _rev(repo_dir, head, "--head")
    source = repo_dir
    if worktree:
        source = workdir / "source"
        head_sha = worktree_commit(repo_dir, head_sha, source)
    subject = _git("-C", str(source), "log", "-1", "--format=%s", head_sha)
    sandbox = GitSandbox(workdir / "github")
    clone_dir = workdir / "clone"
    base_branch = _branch_name(repo_dir, base)
    try:
        if event_name == "pull_request":
            pr = sandbox.pull_request(repository, source, clone_dir, base_sha=base_sha,
                                      head_sha=head_sha, number=pr_number,
                                      base_ref=base_branch, head_ref=f"replay/pr-{pr_number}")
            payload = events.pull_request_event(
                repository=repository, number=pr_number, head_sha=head_sha, base_sha=base_sha,
                head_ref=pr.head_ref, base_ref=base_branch, label=label, title=subject,
                default_branch=base_branch)
            click.echo(f"pull request #{pr_number}: {head_sha[:12]} into {base_branch} "
                       f"({base_sha[:12]}), merge {pr.merge_sha[:12]}")
        else:
            sandbox.publish(repository, source, {f"refs/heads/{base_branch}": head_sha})
            sandbox.set_default_branch(repository, base_branch)
            sandbox.clone(repository, clone_dir, rev=head_sha, branch=base_branch)
            if event_name == "push":
                payload = events.push_event(repository=repository, after=head_sha,
                                            before=base_sha, message=subject,
                                            ref=f"refs/heads/{base_branch}",
                                            default_branch=base_branch)
            else:
                payload = events.workflow_dispatch_event(
                    repository=repository, inputs=input_map, ref=f"refs/heads/{base_branch}",
                    default_branch=base_branch)
        for name, path in mirror_map.items():
            sandbox.mirror(name, Path(path).expanduser().resolve())
    except SandboxError as exc:
        raise _fail(str(exc)) from None
    try:
        workflow = workflow_file(workflow, clone_dir)
    except SandboxPathError as exc:
        raise _fail(exc.message, exc.hint) from None
    click.echo(f"tool cache: {cache_dir / 'toolcache'}")
    pyproject = clone_dir / "pyproject.toml"
    toolcache = python_toolcache(
        cache_dir / "toolcache",
        preinstall=project_dependencies(pyproject) if pyproject.is_file() else ())
    run = run_act(workflow, event_name, payload, repo_dir=clone_dir, jobs=list(jobs) or None,
                  env={**sandbox.env(), **env_map}, secrets=secret_map,
                  secret_file=secret_file.resolve() if secret_file else None, inputs=input_map,
                  variables=var_map,
                  runner_labels=[*catalog_labels(clone_dir), *runner_labels],
                  artifact_dir=workdir / "artifacts", actions_dir=actions_dir,
                  actions_cache=cache_dir / "actions", toolcache=toolcache,
                  log_path=workdir / "logs" / "act.jsonl", timeout=timeout, fleet=fleet,
                  work_dir=workdir / "act")
    click.echo("")
    for key, job in run.log.jobs.items():
        click.echo(f"{job.result or 'unfinished':>10}  {key}")
        for note in job.annotations:
            click.echo(f"            {note}")
    for line in run.log.unparsed:
        if line.startswith("Error:"):
            click.echo(line)
    click.echo(f"\nact exit code {run.exit_code} after {run.seconds:.0f} s"
               + (" (timed out)" if run.timed_out else ""))
    click.echo(f"log:       {run.log_path}")
    click.echo(f"artifacts: {run.artifact_dir}")
    for folder in run.artifacts():
        click.echo(f"           {folder.relative_to(run.artifact_dir)}")
    click.echo(f"workdir:   {workdir}")
    if not run.ok:
        sys.exit(1)
