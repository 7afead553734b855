"""The srt-slurm cache: one checkout (and its venv) per pinned commit, outside the runner's
checkout, shared by every launch on the runner.

``$INFERSWEEP_CACHE/srt-slurm/<sha>/`` (default ``~/.cache/infersweep/srt-slurm/<sha>/``) holds
``src/`` (the checkout, fetched by SHA, HEAD verified), ``venv/`` (``pip install -e src`` and
uv: with an editable install srtctl's root is ``src/``), the fleet's setup files, and
``ready.json``, written last. An entry without ``ready.json`` is a half-built one and is built
again. ``<sha>.lock`` (``flock``) keeps two launches on one runner from building or checking
the same entry at the same time. A warm entry costs one ``git rev-parse``.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from infersweep import gitexec
from infersweep.atomic import write_atomic
from infersweep.diagnostics import Diagnostic, InputError
from infersweep.pins.verify import _MISSING_PATTERNS, _last_line
from infersweep.redact import redact
from infersweep.rowjobs.fleet import Fleet

CACHE_ENV = "INFERSWEEP_CACHE"
READY = "ready.json"
LOCK_WAIT_S = 2400.0


class CheckoutError(InputError):
    """The pinned srt-slurm commit could not be checked out or installed."""

    def __init__(self, message: str, hint: str = ""):
        super().__init__(Diagnostic("srt-slurm", 0, 0, message, hint, "srt-slurm-checkout"))


def cache_root(environ: dict[str, str] | None = None) -> Path:
    environ = os.environ if environ is None else environ
    base = environ.get(CACHE_ENV) or os.path.join(os.path.expanduser("~"), ".cache", "infersweep")
    return Path(base) / "srt-slurm"


@dataclass(frozen=True)
class Checkout:
    commit: str
    root: Path  # the cache entry
    warm: bool  # re-used, not built by this launch

    @property
    def src(self) -> Path:
        return self.root / "src"

    @property
    def venv(self) -> Path:
        return self.root / "venv"

    @property
    def srtctl(self) -> Path:
        return self.venv / "bin" / "srtctl"


@contextmanager
def entry_lock(path: Path, timeout: float = LOCK_WAIT_S, say=print):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as fh:
        end = time.monotonic() + timeout
        told = False
        while True:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if not told:
                    say(f"waiting for {path} (another launch is preparing this checkout)")
                    told = True
                if time.monotonic() > end:
                    raise CheckoutError(f"{path} stayed locked for {timeout:g} s",
                                        "another launch on this runner holds it; "
                                        "check for a stuck process") from None
                time.sleep(0.5)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _git(args: list[str], cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
    return gitexec.run(["-c", "protocol.ext.allow=never", *args], cwd=str(cwd),
                       timeout=timeout, env=env)


def head(src: Path) -> str | None:
    if not (src / ".git").exists():
        return None
    p = _git(["rev-parse", "HEAD"], src, 30)
    return p.stdout.strip() if p.returncode == 0 else None


def fetch(src: Path, url: str, commit: str) -> None:
    """Fetch exactly ``commit`` (shallow) and check it out detached; HEAD must equal it."""
    src.mkdir(parents=True, exist_ok=True)
    _git(["init", "-q"], src)
    p = _git(["-c", "protocol.version=2", "fetch", "--quiet", "--no-tags", "--depth", "1",
              gitexec.END_OF_OPTIONS, url, commit], src)
    if p.returncode != 0:
        why = _last_line(p.stderr) or f"git fetch exited {p.returncode}"
        if _MISSING_PATTERNS.search(p.stderr):
            raise CheckoutError(redact(f"srt-slurm commit {commit} is not on {url} ({why})"),
                                "the pin in configs/runtimes.yaml names a commit the remote "
                                "does not have (rebased away or never pushed?): fix the pin; "
                                "`infersweep pins verify` checks it")
        raise CheckoutError(redact(f"cannot fetch srt-slurm {commit} from {url}: {why}"),
                            "check the remote URL and the runner's network")
    # ``commit`` is a checked 40-hex SHA (never an option); checkout takes no --end-of-options
    p = _git(["-c", "advice.detachedHead=false", "checkout", "-q", "--detach", commit], src)
    got = head(src)
    if p.returncode != 0 or got != commit:
        raise CheckoutError(f"srt-slurm checkout mismatch: HEAD is {got}, the pin {commit}",
                            _last_line(p.stderr))


def _clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items()
            if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "PYTHONPYCACHEPREFIX",
                         "PIP_REQUIRE_VIRTUALENV")}


def _run(argv: list[str], what: str, **kw) -> None:
    p = subprocess.run(argv, capture_output=True, text=True, env=_clean_env(), **kw)
    if p.returncode != 0:
        tail = (p.stderr or p.stdout).strip().splitlines()[-5:]
        raise CheckoutError(f"{what} failed (exit {p.returncode}): " + " | ".join(tail),
                            "see the command's output above; the cache entry will be rebuilt "
                            "on the next launch")


def install(co: Checkout, fleet: Fleet, repo: Path) -> None:
    """venv + editable srtctl + uv, then the fleet's setup links and command."""
    _run([sys.executable, "-m", "venv", str(co.venv)], "creating the srt-slurm venv")
    _run([str(co.venv / "bin" / "pip"), "install", "-q", "--disable-pip-version-check",
          "-e", str(co.src), "uv"], "pip install -e srt-slurm uv")
    for rel, target in fleet.setup_links.items():
        dest = co.src / rel
        resolved = fleet.link_target(target, repo, co.venv)
        if not resolved or not os.path.exists(resolved):
            raise CheckoutError(f"fleet {fleet.name}: setup link {rel} -> {target}: "
                                f"{resolved or 'not found'} does not exist",
                                f"install it or fix setup-links in {fleet.source}")
        dest.parent.mkdir(parents=True, exist_ok=True)
        if dest.is_symlink() or dest.exists():
            dest.unlink()
        os.symlink(resolved, dest)
    if fleet.setup:
        _run(list(fleet.setup), f"fleet {fleet.name} setup `{' '.join(fleet.setup)}`",
             cwd=co.src)


def ensure(commit: str, url: str, fleet: Fleet, repo: Path, *, root: Path | None = None,
           say=print) -> Checkout:
    """The ready cache entry for ``commit``: re-used when warm, else fetched and installed."""
    gitexec.check_sha(commit, "srt-slurm commit", "configs/runtimes.yaml")
    base = root or cache_root()
    co = Checkout(commit, base / commit, warm=True)
    with entry_lock(base / f"{commit}.lock", say=say):
        ready = co.root / READY
        if ready.is_file() and head(co.src) == commit and co.srtctl.exists():
            return co
        if co.root.exists():
            say(f"srt-slurm cache {co.root}: incomplete, building again")
            shutil.rmtree(co.root)
        say(f"srt-slurm {commit[:12]}: fetching from {redact(url)} into {co.root}")
        t0 = time.monotonic()
        try:
            fetch(co.src, url, commit)
            install(co, fleet, repo)
        except BaseException:
            shutil.rmtree(co.root, ignore_errors=True)
            raise
        write_atomic(ready, json.dumps({"commit": commit, "repository": redact(url),
                                        "fleet": fleet.name,
                                        "seconds": round(time.monotonic() - t0, 1)}) + "\n")
        return Checkout(commit, co.root, warm=False)
