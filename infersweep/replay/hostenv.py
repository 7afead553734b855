"""The environment act starts with: an allow-list of this machine's variables, never all.

act's host mode copies its own environment into every step it runs, so whatever act is
started with, the replayed head's code sees. Only what a job needs to run here passes: the
locale, ``PATH`` (act needs ``node``, the jobs ``git``), the certificate bundles, proxies and
package-index settings that let ``pip`` reach an index from this network. Everything else (a
real ``GITHUB_TOKEN``, cloud keys, ``INFERSWEEP_DB_URL``) stays out; what a job should see is
given explicitly (``infersweep replay --env``/``--secret``/``--secret-file``).

``HOME`` and ``TMPDIR`` are folders of the run's work folder, so the files tools write under
``~`` (caches, configs, act's own) land there; the user's pip configuration file is named by
``PIP_CONFIG_FILE`` so pip keeps its index settings without the rest of the home folder.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

ALLOWED = frozenset({
    "PATH", "LANG", "LANGUAGE", "TZ", "TERM", "USER", "LOGNAME", "SHELL",
    # certificates: corporate networks put their own CA here
    "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE",
    "NODE_EXTRA_CA_CERTS", "GIT_SSL_CAINFO", "PIP_CERT",
    # proxies
    "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY",
    "http_proxy", "https_proxy", "no_proxy", "all_proxy",
    # where pip and uv find packages
    "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS", "PIP_NO_INDEX",
    "PIP_TRUSTED_HOST", "PIP_DEFAULT_TIMEOUT", "PIP_DISABLE_PIP_VERSION_CHECK",
    "PIP_CONFIG_FILE", "UV_INDEX_URL", "UV_DEFAULT_INDEX", "UV_EXTRA_INDEX_URL",
    "UV_NATIVE_TLS",
})
ALLOWED_PREFIXES = ("LC_",)


def is_allowed(name: str) -> bool:
    """Whether this machine's variable ``name`` reaches act (and so every step)."""
    return name in ALLOWED or name.startswith(ALLOWED_PREFIXES)


def user_pip_config(environ: Mapping[str, str]) -> Path | None:
    """The user's own pip configuration file, where pip looks for it, if there is one."""
    home = environ.get("HOME")
    config_home = environ.get("XDG_CONFIG_HOME") or (f"{home}/.config" if home else "")
    candidates = [Path(config_home) / "pip" / "pip.conf"] if config_home else []
    if home:
        candidates.append(Path(home) / ".pip" / "pip.conf")
    return next((p for p in candidates if p.is_file()), None)


def act_environment(work_dir: str | Path,
                    environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """act's whole environment for a run whose folders are under ``work_dir``: the allowed
    variables of ``environ`` (default: this process's), ``HOME`` and ``TMPDIR`` inside
    ``work_dir`` (created), and ``PIP_CONFIG_FILE`` for the user's pip configuration."""
    environ = os.environ if environ is None else environ
    env = {name: value for name, value in environ.items() if is_allowed(name)}
    home, tmp = Path(work_dir) / "home", Path(work_dir) / "tmp"
    home.mkdir(parents=True, exist_ok=True)
    tmp.mkdir(parents=True, exist_ok=True)
    pip_config = user_pip_config(environ)
    if pip_config is not None and "PIP_CONFIG_FILE" not in env:
        env["PIP_CONFIG_FILE"] = str(pip_config)
    env.update(HOME=str(home), TMPDIR=str(tmp))
    env.setdefault("PATH", os.defpath)
    return env


def secret_file_values(path: str | Path | None) -> list[str]:
    """The values of a secret file's ``NAME=VALUE`` lines (quotes around a value removed), to
    mask in the log as act masks them in its output."""
    if path is None:
        return []
    values = []
    for line in Path(path).read_text(encoding="utf-8", errors="replace").splitlines():
        name, sep, value = line.strip().removeprefix("export ").partition("=")
        if sep and name and not name.startswith("#"):
            value = value.strip()
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
                value = value[1:-1]
            values.append(value)
    return values


def mask_values(text: str, values: list[str] | tuple[str, ...], mask: str = "***") -> str:
    """``text`` with every occurrence of each secret value (4 characters or more: shorter
    ones would mask ordinary words) replaced by ``mask``, the longest first."""
    for value in sorted((v for v in values if len(v) >= 4), key=len, reverse=True):
        text = text.replace(value, mask)
    return text
