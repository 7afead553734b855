"""A runner tool cache that lets ``actions/setup-python`` find this machine's Python.

setup-python (v5) looks for ``$RUNNER_TOOL_CACHE/Python/<version>/<arch>/`` with the marker
file ``<arch>.complete`` beside it before it downloads anything; when both are there it only
puts ``<arch>`` and ``<arch>/bin`` on PATH. So a folder laid out that way, holding this
machine's interpreter, makes ``python-version: "3.11"`` work with no network.

Why the interpreter in that folder is not simply a venv every job installs into: act runs the
rows of a matrix (and of a called workflow's matrix) at the same time, whatever
``--concurrent-jobs`` says, and every job gets the one ``RUNNER_TOOL_CACHE`` passed with
``--env``. Jobs that ``pip install .`` into one shared environment uninstall files another job
is importing. Here the tool cache holds a *shared, read-only base* (a venv of the host's
interpreter, with pip and optionally pre-installed requirements) and small launchers named
``python``, ``python3``, ``python3.X``, ``pip``, ``pip3`` and ``pip3.X``. The first launcher
called in a job creates that job's own environment under ``$RUNNER_TEMP`` (a fresh directory
per job in act's host mode), layered over the base through a ``.pth`` file, and appends its
``bin`` to ``$GITHUB_PATH`` so the commands ``pip install`` puts there are found by the job's
later steps. Each job installs into its own environment; the base is never written by a job
(pip does not uninstall packages outside the environment it runs in, it shadows them). That is
one tool cache per job in effect, with the cost of one venv (about a second, no pip copy) per job.
Outside a job (no ``$RUNNER_TEMP``) the launchers run the base itself.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from infersweep.replay.locking import locked

ARCH = "x64"  # what setup-python asks for on an x86-64 runner (os.arch() in Node)
JOB_ENV_DIR = "replay-python"  # under $RUNNER_TEMP: the job's own environment
BASE_PYTHON = "python-base"  # the base venv's real interpreter, beside the launchers
_LAUNCHED = ("python", "python3", "pip", "pip3")


@dataclass(frozen=True)
class PythonToolCache:
    """A tool cache holding one Python: pass ``root`` as ``RUNNER_TOOL_CACHE`` (and
    ``AGENT_TOOLSDIRECTORY``); ``version`` is the full version setup-python resolves to."""

    root: Path
    version: str
    install_dir: Path  # <root>/Python/<version>/x64

    @property
    def base_python(self) -> Path:
        return self.install_dir / "bin" / BASE_PYTHON

    def env(self) -> dict[str, str]:
        """The variables a runner sets for its tool cache."""
        return {"RUNNER_TOOL_CACHE": str(self.root), "AGENT_TOOLSDIRECTORY": str(self.root)}


def project_dependencies(pyproject: str | os.PathLike, extras=("eval",)) -> list[str]:
    """``[project].dependencies`` of a pyproject.toml, with those of ``extras`` that are not
    the project itself: what to pre-install into the base so a job's ``pip install .`` (the
    benchmark and collect jobs install ``.[eval]``) only builds the project (measured on 2
    cores: three matrix jobs each installing this project took 52-65 s without, 15 s with)."""
    import tomllib

    with open(pyproject, "rb") as handle:
        project = tomllib.load(handle).get("project", {})
    name = project.get("name", "")
    deps = list(project.get("dependencies", []))
    for extra in extras:
        deps += [d for d in project.get("optional-dependencies", {}).get(extra, [])
                 if not d.startswith(f"{name}[")]
    return deps


def interpreter_version(python: str | os.PathLike) -> tuple[str, str]:
    """(full version ``3.11.7``, the base interpreter's path) of ``python``; a venv's python
    gives the interpreter it was made from, so the tool cache never nests venvs."""
    code = ("import platform, sys; "
            "print(platform.python_version()); "
            "print(getattr(sys, '_base_executable', sys.executable))")
    done = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True)
    version, base = done.stdout.split("\n")[:2]
    return version.strip(), base.strip()


def python_toolcache(root: str | os.PathLike, python: str | os.PathLike | None = None, *,
                     preinstall: list[str] | tuple[str, ...] = ()) -> PythonToolCache:
    """The tool cache under ``root`` for ``python`` (default: the running interpreter's base),
    built on first use and reused while its marker is there.

    ``preinstall``: pip arguments installed into the shared base once (e.g. the project's
    dependencies), so each job's ``pip install .`` only builds the project. Building is done
    under a lock, so test sessions or commands sharing a root do not build it twice."""
    root = Path(root).resolve()
    version, base = interpreter_version(python or sys.executable)
    install_dir = root / "Python" / version / ARCH
    marker = install_dir.parent / f"{ARCH}.complete"
    cache = PythonToolCache(root, version, install_dir)
    root.mkdir(parents=True, exist_ok=True)
    with locked(root / ".replay-toolcache.lock"):
        if marker.is_file() and _usable(cache, preinstall):
            return cache
        marker.unlink(missing_ok=True)
        if install_dir.exists():
            shutil.rmtree(install_dir)
        _build(cache, base, preinstall)
        marker.write_text("")
    return cache


def _preinstall_stamp(cache: PythonToolCache) -> Path:
    return cache.install_dir / "replay-preinstalled.txt"


def _usable(cache: PythonToolCache, preinstall) -> bool:
    stamp = _preinstall_stamp(cache)
    wanted = "\n".join(preinstall)
    if (stamp.read_text() if stamp.is_file() else "") != wanted:
        return False
    try:
        return interpreter_version(cache.base_python)[0] == cache.version
    except (OSError, subprocess.CalledProcessError):
        return False


def _build(cache: PythonToolCache, base: str, preinstall) -> None:
    """The base venv (pip included), its interpreter renamed, and the launchers."""
    install_dir = cache.install_dir
    install_dir.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([base, "-m", "venv", str(install_dir)], check=True, capture_output=True)
    bindir = install_dir / "bin"
    major_minor = ".".join(cache.version.split(".")[:2])
    names = [*_LAUNCHED, f"python{major_minor}", f"pip{major_minor}"]
    for name in names:
        (bindir / name).unlink(missing_ok=True)
    # A venv's interpreter may have any name: pyvenv.cfg one level up makes it the venv's.
    (bindir / BASE_PYTHON).symlink_to(base)
    if preinstall:
        done = subprocess.run([str(bindir / BASE_PYTHON), "-m", "pip", "install", "--quiet",
                               "--disable-pip-version-check", *preinstall],
                              capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"pre-installing {' '.join(preinstall)} into the tool cache "
                               f"failed:\n{done.stderr[-4000:]}")
    _preinstall_stamp(cache).write_text("\n".join(preinstall))
    site = _site_packages(bindir / BASE_PYTHON)
    for name in names:
        launcher = bindir / name
        launcher.write_text(_launcher(name, base, str(bindir / BASE_PYTHON), site))
        launcher.chmod(0o755)


def _site_packages(python: Path) -> str:
    done = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                          capture_output=True, text=True, check=True)
    return done.stdout.strip()


def _launcher(name: str, interpreter: str, base_python: str, base_site: str) -> str:
    """A POSIX shell launcher: the job's environment (made on first use) runs ``name``."""
    module = name.startswith("pip")
    run_job = ('exec "$env/bin/python" -m pip "$@"' if module
               else f'exec "$env/bin/{name}" "$@"')
    run_base = (f'exec "{base_python}" -m pip "$@"' if module else f'exec "{base_python}" "$@"')
    return f"""#!/bin/sh
# infersweep replay: run {name} in this job's own environment (infersweep/replay/toolcache.py)
if [ -z "$RUNNER_TEMP" ]; then
  {run_base}
fi
env="$RUNNER_TEMP/{JOB_ENV_DIR}"
if [ ! -x "$env/bin/python" ]; then
  "{interpreter}" -m venv --without-pip "$env" || exit 1
  site=$("$env/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))') || exit 1
  # the shared base (pip, pre-installed packages) after the job's own site-packages
  echo "{base_site}" > "$site/zz-replay-base.pth"
  if [ -n "$GITHUB_PATH" ]; then echo "$env/bin" >> "$GITHUB_PATH"; fi
fi
PATH="$env/bin:$PATH"
export PATH
{run_job}
"""
