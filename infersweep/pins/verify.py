"""``infersweep pins verify``: prove every pinned commit can be fetched from its remote.

For each pin, in a scratch repository in a temporary directory::

    git ls-remote --end-of-options <url> HEAD                   # is the remote there at all?
    git fetch --depth 1 --no-tags --end-of-options <url> <sha>  # can the commit be fetched?
    git cat-file -e --end-of-options <sha>^{commit}             # and is it a commit?

This is what a GPU job's ``git fetch``/``checkout`` would do later; doing it first on a CPU
turns "reference is not a tree" after hours in a queue into a failure in seconds. GitHub (like
``uploadpack.allowReachableSHA1InWant``) serves any commit reachable from a branch or tag, so
a commit that was rebased away or never pushed fails here with its own message.

The URL and the SHA come from the lock, an option or the environment: they are passed after
``--end-of-options`` (and the SHA is checked to be 40 hex digits first), so they can never act
as git options; ``ext::`` URLs, which run commands, are refused by git. Credentials in a URL
are masked (:func:`infersweep.redact.redact`) in every :class:`Result`, which is all any
output path prints.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass

from infersweep.gitexec import END_OF_OPTIONS, GitMissing
from infersweep.lifeline import signals_exit
from infersweep.pins.lock import Pin, sha_problem
from infersweep.redact import redact

DEFAULT_TIMEOUT = 60.0
URL_ENV_PREFIX = "INFERSWEEP_PIN_URL_"

# statuses
OK = "ok"
MALFORMED = "malformed-sha"
SHORT = "short-sha"
UNREACHABLE = "remote-unreachable"
NOT_FOUND = "commit-not-found"
SKIPPED = "skipped"

_MISSING_PATTERNS = re.compile(
    r"not our ref|couldn't find remote ref|unadvertised object|no such remote ref|"
    r"not a tree|did not send all necessary objects|not a valid object|bad object",
    re.IGNORECASE)


@dataclass
class Result:
    name: str
    repository: str  # the URL actually used
    commit: str
    status: str
    message: str
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.status in (OK, SKIPPED)

    def __post_init__(self) -> None:
        # the one place output text is made: nothing printed can carry a credential
        self.repository = redact(self.repository)
        self.message = redact(self.message)

    def to_dict(self) -> dict:
        return {**asdict(self), "ok": self.ok}


def url_env_name(pin_name: str) -> str:
    """``srt-slurm`` -> ``INFERSWEEP_PIN_URL_SRT_SLURM``."""
    return URL_ENV_PREFIX + re.sub(r"[^A-Za-z0-9]", "_", pin_name).upper()


def resolve_url(pin: Pin, overrides: dict[str, str] | None = None,
                environ: dict[str, str] | None = None) -> str:
    """``--remote NAME=URL`` beats ``$INFERSWEEP_PIN_URL_<NAME>`` beats the lock."""
    overrides = overrides or {}
    environ = os.environ if environ is None else environ
    return overrides.get(pin.name) or environ.get(url_env_name(pin.name)) or pin.repository


def _git_env() -> dict[str, str]:
    env = dict(os.environ)
    env["GIT_TERMINAL_PROMPT"] = "0"  # a private or missing repo must fail, not prompt
    env["GCM_INTERACTIVE"] = "never"
    env.setdefault("GIT_SSH_COMMAND", "ssh -o BatchMode=yes")
    env["LC_ALL"] = "C"  # stable git messages to classify
    return env


def _last_line(text: str) -> str:
    """git's own reason: its last ``fatal:``/``error:`` line, else its last line."""
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    marked = [ln for ln in lines if ln.startswith(("fatal:", "error:"))]
    return (marked or lines or [""])[-1]


class _Timeout(Exception):
    pass


class _Stopped(Exception):
    """The command is stopping (a signal): start no more git processes."""


class _GitProcesses:
    """Every git process group running for this command, so that a stop signal ends them
    (each runs in its own session, out of reach of a signal sent to our process group)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.running: set[int] = set()
        self.stopping = False

    def add(self, pid: int) -> None:
        with self.lock:
            self.running.add(pid)

    def discard(self, pid: int) -> None:
        with self.lock:
            self.running.discard(pid)

    def kill_all(self) -> None:
        with self.lock:
            self.stopping = True
            pids = list(self.running)
        for pid in pids:
            with contextlib.suppress(OSError):
                os.killpg(pid, signal.SIGKILL)


_PROCS = _GitProcesses()


def _git(args: list[str], cwd: str, timeout: float) -> subprocess.CompletedProcess:
    """Run git; on timeout kill its whole process group (ssh/https helpers included)."""
    if _PROCS.stopping:
        raise _Stopped()
    try:
        proc = subprocess.Popen(["git", "-c", "protocol.ext.allow=never", *args], cwd=cwd,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                stdin=subprocess.DEVNULL, text=True, errors="replace",
                                env=_git_env(), start_new_session=True)
    except FileNotFoundError as exc:
        if exc.filename == cwd:
            raise
        raise GitMissing() from None
    _PROCS.add(proc.pid)
    try:
        out, err = proc.communicate(timeout=max(timeout, 0.1))
    except subprocess.TimeoutExpired:
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise _Timeout() from None
    finally:
        _PROCS.discard(proc.pid)
    if _PROCS.stopping:
        raise _Stopped()
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def verify_pin(pin: Pin, url: str | None = None, *, timeout: float = DEFAULT_TIMEOUT) -> Result:
    """Fetch ``pin.commit`` from ``url`` (default: the pin's repository) into a scratch repo."""
    url = url or pin.repository
    start = time.monotonic()

    def result(status: str, message: str) -> Result:
        return Result(pin.name, url, pin.commit, status, message,
                      round(time.monotonic() - start, 3))

    problem = sha_problem(pin.commit)
    if problem:
        rule, message, _hint = problem
        status = SHORT if rule == "pin-short-sha" else MALFORMED
        return result(status, f"{'short' if status == SHORT else 'malformed'} sha: {message}")
    if not pin.verify:
        return result(SKIPPED, "not verified (verify: false in the lock)")
    if not url or url.startswith("-") or any(c.isspace() or ord(c) < 32 for c in url):
        return result(UNREACHABLE, f"not a repository URL: {url!r}")

    deadline = start + timeout
    with tempfile.TemporaryDirectory(prefix="infersweep-pin-") as scratch:
        try:
            _git(["init", "-q"], scratch, 30)
            probe = _git(["ls-remote", END_OF_OPTIONS, url, "HEAD"], scratch,
                         deadline - time.monotonic())
            if probe.returncode != 0:
                why = _last_line(probe.stderr) or f"git ls-remote exited {probe.returncode}"
                return result(UNREACHABLE, f"remote unreachable: {url}: {why}")
            fetch = _git(["-c", "protocol.version=2", "fetch", "--quiet", "--no-tags",
                          "--depth", "1", END_OF_OPTIONS, url, pin.commit], scratch,
                         deadline - time.monotonic())
            if fetch.returncode != 0:
                why = _last_line(fetch.stderr) or f"git fetch exited {fetch.returncode}"
                if _MISSING_PATTERNS.search(fetch.stderr):
                    return result(NOT_FOUND,
                                  f"commit not found on remote (rebased away or unpublished?): "
                                  f"{pin.commit} is not reachable from any branch or tag of "
                                  f"{url} ({why})")
                return result(UNREACHABLE, f"remote unreachable while fetching: {url}: {why}")
            present = _git(["cat-file", "-e", END_OF_OPTIONS, f"{pin.commit}^{{commit}}"],
                           scratch, 30)
            if present.returncode != 0:
                return result(NOT_FOUND, f"commit not found on remote: fetching {pin.commit} "
                                         f"from {url} did not produce that commit")
        except _Timeout:
            return result(UNREACHABLE, f"remote unreachable: {url}: no answer within "
                                       f"{timeout:g} s")
        except _Stopped:
            return result(UNREACHABLE, "stopped before the check finished")
        except OSError as exc:
            return result(UNREACHABLE, f"cannot run git: {exc.strerror or exc}")
    return result(OK, f"{pin.commit} is fetchable from {url}")


def verify_pins(pins: list[Pin], *, overrides: dict[str, str] | None = None,
                timeout: float = DEFAULT_TIMEOUT, jobs: int = 4) -> list[Result]:
    """Verify several pins concurrently; results in the order of ``pins``."""
    if not pins:
        return []
    _PROCS.stopping = False
    # A stop signal ends every git process group and lets each worker remove its scratch
    # repository before the command exits (128 + the signal number).
    with signals_exit(), ThreadPoolExecutor(max_workers=max(1, min(jobs, len(pins)))) as pool:
        futures = [pool.submit(verify_pin, p, resolve_url(p, overrides), timeout=timeout)
                   for p in pins]
        try:
            return [f.result() for f in futures]
        except BaseException:
            _PROCS.kill_all()
            raise
