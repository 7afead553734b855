"""Names and paths ``infersweep replay`` turns into places on disk, checked before any use.

A repository name becomes ``<sandbox>/<owner>/<repo>.git`` and a workflow name a file of the
clone act runs: ``--repository ../octo`` would put the repository beside the sandbox, where
no git rewrite points (its clone then goes to the real github.com), and ``--workflow
../../etc/passwd`` would hand act a file outside the clone. Both are refused, with the option
named, before anything is created.
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

# GitHub's own rules: owners are letters, digits and single hyphens; repository names add
# '.' and '_' ('.' and '..' alone are not names)
OWNER = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})")
REPO = re.compile(r"[A-Za-z0-9._-]{1,100}")
WORKFLOWS_DIR = PurePosixPath(".github/workflows")


class SandboxPathError(ValueError):
    """A name or path that would leave the sandbox: ``message`` and ``hint``."""

    def __init__(self, message: str, hint: str):
        super().__init__(message)
        self.message, self.hint = message, hint


def repository_name(value: str, option: str) -> str:
    """``value`` when it is ``OWNER/REPO`` as GitHub spells one, else SandboxPathError."""
    owner, sep, repo = value.partition("/")
    if (not sep or not OWNER.fullmatch(owner) or not REPO.fullmatch(repo)
            or repo in (".", "..")):
        raise SandboxPathError(
            f"{option} {value!r} is not OWNER/REPO",
            "an owner of letters, digits and '-', a name of letters, digits, '.', '-' and "
            "'_' (e.g. SemiAnalysisAI/srt-slurm); paths such as '../x' would leave the "
            "replay's sandbox")
    return value


def _workflow_hint() -> str:
    return f"name a file under {WORKFLOWS_DIR}/ of the repository, e.g. " \
           f"{WORKFLOWS_DIR}/run-sweep.yml"


def workflow_path(value: str) -> PurePosixPath:
    """``value`` as a workflow's path in a repository (relative, under .github/workflows/,
    as GitHub requires, a .yml or .yaml file), else SandboxPathError."""
    path = PurePosixPath(value)
    if (path.is_absolute() or ".." in path.parts or path.parent != WORKFLOWS_DIR
            or path.suffix not in (".yml", ".yaml")):
        raise SandboxPathError(f"--workflow {value!r} is not a workflow file of the "
                               "repository", _workflow_hint())
    return path


def workflow_file(value: str, clone: Path) -> Path:
    """The workflow ``value`` names, as a file inside ``clone``, else SandboxPathError."""
    full = (clone / workflow_path(value)).resolve()
    if not full.is_relative_to((clone / WORKFLOWS_DIR).resolve()):
        raise SandboxPathError(f"--workflow {value!r} leads outside the repository "
                               "(a symbolic link)", _workflow_hint())
    if not full.is_file():
        raise SandboxPathError(f"no workflow {value} at the replayed commit", _workflow_hint())
    return full
