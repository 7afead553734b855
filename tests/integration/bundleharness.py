"""The bundled client (``bench bundle``) on bare interpreters: Pythons with no site packages.

The second and third interpreter versions come from this machine kind's image (pyenv builds
of 3.10, 3.12 and 3.13 beside the 3.11 the project runs on; Debian 12's apt has only 3.11). Set
``INFERSWEEP_TEST_PYTHONS`` to a colon-separated list of interpreters to use others.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
from pathlib import Path

VERSIONS = ("3.10", "3.11", "3.12", "3.13")


def find_python(version: str) -> str | None:
    """An interpreter of ``version`` (major.minor): from $INFERSWEEP_TEST_PYTHONS, PATH, or
    pyenv's versions folder."""
    candidates = [p for p in os.environ.get("INFERSWEEP_TEST_PYTHONS", "").split(":") if p]
    candidates.append(shutil.which(f"python{version}") or "")
    roots = [os.environ.get("PYENV_ROOT"), os.path.expanduser("~/.pyenv"),
             os.path.join(pwd.getpwuid(os.getuid()).pw_dir, ".pyenv")]  # whatever $HOME says
    for root in dict.fromkeys(r for r in roots if r):
        candidates += sorted(glob.glob(os.path.join(root, "versions", f"{version}.*", "bin",
                                                    "python3")), reverse=True)
    for exe in candidates:
        if not exe or not os.access(exe, os.X_OK):
            continue
        try:
            out = subprocess.run([exe, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                                 capture_output=True, text=True, timeout=30).stdout.strip()
        except (OSError, subprocess.TimeoutExpired):
            continue
        if out == version:
            return exe
    return None


def skip_reason(version: str) -> str:
    return (f"no Python {version} on this machine (looked in $INFERSWEEP_TEST_PYTHONS, PATH "
            f"and pyenv's versions; Debian 12's apt has only 3.11): the bundle is not tested "
            f"on {version} here")


def bare_python(base: str, where: Path) -> Path:
    """A venv of ``base`` without pip and without the base's site packages: nothing but the
    standard library, like an engine container's interpreter with none of our dependencies."""
    subprocess.run([base, "-m", "venv", "--without-pip", str(where)], check=True,
                   capture_output=True, timeout=120)
    exe = where / "bin" / "python"
    for mod in ("click", "orjson", "numpy", "uvloop", "rich", "infersweep"):
        found = subprocess.run([str(exe), "-I", "-c", f"import {mod}"], capture_output=True)
        assert found.returncode != 0, f"{mod} importable in the bare venv {where}"
    return exe


def bare_env() -> dict[str, str]:
    """The environment of a job step: no PYTHONPATH or venv of ours leaking in."""
    drop = ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP", "PYTHONUSERBASE")
    return {k: v for k, v in os.environ.items() if k not in drop}
