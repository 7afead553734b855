"""The pinned replay client (``packages.agentic-client`` in configs/runtimes.yaml) in a venv
of its own.

InferenceX replays agentic traces with its aiperf fork, released as ``agentx-harness``. It
ships its own ``aiperf`` package and ~130 distributions (~1.1 GB), so it is installed into a
venv that nothing else shares: never beside the engine's packages, never beside upstream
aiperf. The venv is installed from the hash lock only (``pip --require-hashes --no-deps``), and
a stamp inside it records which pin it holds, so a venv from an older pin is refused rather
than silently used.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from infersweep.atomic import write_atomic
from infersweep.diagnostics import InputError
from infersweep.pins.lock import LOCK_PATH, load_lock
from infersweep.pins.packages import PackagePin, interpreter_fits

PIN_NAME = "agentic-client"
VENV_ENV = "INFERSWEEP_AGENTIC_CLIENT_VENV"
STAMP = "infersweep-client.json"
INSTALL_HINT = "install it with `infersweep agentic client install`"


ROOT_ENV = "INFERSWEEP_AGENTIC_PIN_ROOT"  # set by the local executor for its jobs


def default_root() -> Path | None:
    """The repository whose lock pins the client: ``$INFERSWEEP_AGENTIC_PIN_ROOT`` (the
    launching repository, given to a local job, which runs in its own folder with an
    infersweep that may be installed, not a checkout), the working directory's, else the one
    this infersweep runs from; None when none has it."""
    given = [Path(os.environ[ROOT_ENV])] if os.environ.get(ROOT_ENV) else []
    for root in (*given, Path("."), Path(__file__).resolve().parents[2]):
        if (root / LOCK_PATH).is_file():
            return root
    return None


def pin(root: Path | None = None) -> PackagePin:
    root = root if root is not None else default_root()
    if root is None:
        raise InputError(f"no {LOCK_PATH} here or beside this infersweep: the replay client's "
                         "pin cannot be read (run from the repository's root)")
    lock = load_lock(root / LOCK_PATH)
    if PIN_NAME not in lock.packages:
        raise InputError(f"{root / LOCK_PATH}: no packages.{PIN_NAME} pin (the replay client)")
    return lock.packages[PIN_NAME]


def default_venv() -> Path:
    """``$INFERSWEEP_AGENTIC_CLIENT_VENV``, else a per-user cache folder."""
    if os.environ.get(VENV_ENV):
        return Path(os.environ[VENV_ENV])
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "infersweep" / "agentic-client"


def _lock_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@dataclass(frozen=True)
class ClientVenv:
    """An installed client: where its commands are, and which pin it holds."""

    path: Path
    distribution: str
    version: str

    @property
    def aiperf(self) -> Path:
        return self.path / "bin" / "aiperf"

    @property
    def python(self) -> Path:
        return self.path / "bin" / "python"


def locate(venv: Path | None = None, root: Path | None = None) -> ClientVenv:
    """The installed client at ``venv`` (default :func:`default_venv`), checked against the
    pin and its lock; an InputError that says how to install it otherwise."""
    venv = Path(venv or default_venv())
    root = root if root is not None else default_root()
    p = pin(root)
    stamp_path = venv / STAMP
    try:
        stamp = json.loads(stamp_path.read_text())
    except (OSError, ValueError):
        raise InputError(f"{venv}: no replay client installed there ({p.requirement}); "
                         f"{INSTALL_HINT} --venv {venv}") from None
    want = {"distribution": p.distribution, "version": p.version,
            "lock-sha256": _lock_digest(root / p.lock)}
    got = {k: stamp.get(k) for k in want}
    if got != want:
        raise InputError(f"{venv}: holds {got['distribution']}=={got['version']} from another "
                         f"lock, not the pinned {p.requirement}; {INSTALL_HINT} --venv {venv}")
    client = ClientVenv(venv, p.distribution, p.version)
    if not client.aiperf.exists():
        raise InputError(f"{venv}: the client's aiperf command is missing; {INSTALL_HINT} "
                         f"--venv {venv}")
    return client


def _python_version(python: str) -> tuple[int, int]:
    out = subprocess.run([python, "-c", "import sys; print(*sys.version_info[:2])"],
                         capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise InputError(f"--python {python}: cannot run it ({out.stderr.strip() or 'no output'})")
    major, minor = out.stdout.split()
    return int(major), int(minor)


def install(venv: Path, *, python: str = sys.executable, root: Path | None = None,
            pip_args: list[str] | None = None, echo=print) -> ClientVenv:
    """Install the pinned client into ``venv`` from its hash lock; a venv that already holds
    this pin is kept as it is. The stamp is written last, so an install that fails half-way
    leaves a venv that :func:`locate` refuses and the next install replaces."""
    root = root if root is not None else default_root()
    p = pin(root)
    try:
        return locate(venv, root)
    except InputError:
        pass
    version = _python_version(python)
    if p.requires_python and not interpreter_fits(p.requires_python, version):
        raise InputError(f"{p.requirement} needs Python {p.requires_python}; {python} is "
                         f"{version[0]}.{version[1]} (give --python a fitting interpreter)")
    venv = Path(venv).absolute()
    shutil.rmtree(venv, ignore_errors=True)
    venv.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([python, "-m", "venv", str(venv)], check=True)
    echo(f"installing {p.requirement} and its locked environment into {venv}")
    cmd = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet",
           "--disable-pip-version-check", "--require-hashes", "--no-deps",
           "-r", str(root / p.lock), *(pip_args or [])]
    done = subprocess.run(cmd, check=False)
    if done.returncode != 0:
        raise InputError(f"installing {p.requirement} from {p.lock} failed (pip exited "
                         f"{done.returncode}; its messages are above)")
    write_atomic(venv / STAMP, json.dumps(
        {"distribution": p.distribution, "version": p.version,
         "lock-sha256": _lock_digest(root / p.lock)}, indent=2) + "\n")
    return locate(venv, root)
