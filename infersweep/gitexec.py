"""Running git safely: one place that knows git may be missing and that values from payloads
or options are data, never options.

Every caller passes user-controlled values (SHAs, refs, URLs) *after* ``--end-of-options``
(git 2.24+), so ``head.sha: "--output=/tmp/x"`` is a revision git refuses, not a flag git
obeys; :func:`check_revision` and :func:`check_sha` reject such values before git runs at all.
"""

from __future__ import annotations

import base64
import os
import re
import subprocess

from infersweep.diagnostics import Diagnostic, InputError

GIT_MISSING = "git is not installed or not on PATH"
END_OF_OPTIONS = "--end-of-options"

FULL_SHA = re.compile(r"[0-9a-f]{40}")
# Characters no revision we accept contains: git's forbidden ref characters except the
# ^ ~ { } of suffixes such as ``^{commit}`` and ``~1``, ':' (we add ``rev:path`` ourselves) and
# anything that is whitespace or a control character.
_FORBIDDEN = re.compile(r"[\s\x00-\x1f\x7f:?*\[\\]")


class GitMissing(InputError):
    """git could not be started (not installed, not on PATH, not executable)."""

    def __init__(self, where: str = "<git>"):
        super().__init__(Diagnostic(where, 0, 0, GIT_MISSING,
                                    "install git (e.g. `apt-get install git`) or add it to PATH",
                                    "git-missing"))


def run(args: list[str], *, cwd: str | None = None, timeout: float | None = None,
        text: bool = True, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """``git *args``, output captured; :class:`GitMissing` instead of ``FileNotFoundError``."""
    try:
        return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=text,
                              timeout=timeout, env=env, stdin=subprocess.DEVNULL, check=False)
    except (FileNotFoundError, PermissionError, NotADirectoryError) as exc:
        if cwd is not None and getattr(exc, "filename", None) == cwd:
            raise  # the working directory is the problem, not git
        raise GitMissing() from None


def is_revision(value: str) -> bool:
    """A plausible branch, tag, SHA or ``ref~N`` / ``ref^{commit}``: never empty, never an
    option (a leading '-'), no whitespace or control characters, no ``..`` (a range)."""
    return (bool(value) and not value.startswith("-") and _FORBIDDEN.search(value) is None
            and ".." not in value and not value.endswith((".", "/", ".lock")))


def check_revision(value: str, what: str, where: str = "<input>") -> str:
    """``value`` when it is a plausible revision, else a located :class:`InputError`."""
    if not isinstance(value, str) or not is_revision(value):
        raise InputError(Diagnostic(
            where, 0, 0, f"{what} {value!r} is not a git revision",
            "give a branch, tag or commit SHA (it may not start with '-' or contain spaces)",
            "git-ref"))
    return value


def check_sha(value: str, what: str, where: str = "<input>") -> str:
    """``value`` when it is a full 40-character lowercase SHA."""
    if not isinstance(value, str) or FULL_SHA.fullmatch(value) is None:
        raise InputError(Diagnostic(where, 0, 0, f"{what} {value!r} is not a full commit SHA",
                                    "expected 40 lowercase hexadecimal characters", "git-ref"))
    return value


def token_env(environ=None) -> dict[str, str] | None:
    """The environment for a ``git fetch`` from GitHub that authenticates with the job's
    ``GITHUB_TOKEN`` (None when it is not set).

    A workflow's checkout keeps no credentials (``persist-credentials: false``), so a fetch
    of a private repository would fail without it. The header is added the way
    actions/checkout adds it, as ``http.<server>/.extraheader``, but through git's
    ``GIT_CONFIG_COUNT`` variables (appended after any already set), so the token is
    never on a command line and never written to a git config file.
    """
    environ = dict(os.environ if environ is None else environ)
    token = environ.get("GITHUB_TOKEN")
    if not token:
        return None
    server = environ.get("GITHUB_SERVER_URL", "https://github.com").rstrip("/")
    basic = base64.b64encode(f"x-access-token:{token}".encode()).decode()
    try:
        n = int(environ.get("GIT_CONFIG_COUNT", "0"))
    except ValueError:
        n = 0
    environ[f"GIT_CONFIG_KEY_{n}"] = f"http.{server}/.extraheader"
    environ[f"GIT_CONFIG_VALUE_{n}"] = f"AUTHORIZATION: basic {basic}"
    environ["GIT_CONFIG_COUNT"] = str(n + 1)
    return environ
