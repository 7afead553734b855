"""The real srtctl's dry run as the judge of rendered recipes (``recipe coverage --srtctl``).

``srtctl dry-run -f FILE`` loads a recipe exactly as ``srtctl apply`` does (schema, cross-field
checks, the sbatch script) and submits nothing. A process costs about a second, most of it
importing srtctl, so the recipes are written into folders and each folder is one
``srtctl dry-run -f DIR`` (a tenth of a second per recipe), several folders at a time. Its
output is prose for people: each recipe starts with ``(i/N) Processing: <file>`` and a
refused one has an ``❌ Error: ...`` paragraph, which is the verdict read here.

The run is kept neutral and offline: a working folder with no ``srtslurm.yaml`` above it (so
no cluster defaults apply), and srtctl's optional Hugging Face lookup of
``identity.model.repo`` (non-fatal, a network request per recipe) pointed at an unreachable
proxy.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse

from infersweep.diagnostics import Diagnostic, InputError
from infersweep.recipe.lookup import check_checkout, commit_of

DEFAULT_BACKEND = "sglang"  # srtctl v1's backend when a recipe names none
_MARKER = re.compile(r"^\((\d+)/(\d+)\) Processing: (\S+)\s*$")
_ERROR = "❌ Error:"
_INVALID_IN = re.compile(r"Invalid config in \S+?: ")
_UNREACHABLE = "http://127.0.0.1:9"  # discard port: refused at once
COLUMNS = "200"
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


class SrtctlError(InputError):
    def __init__(self, where: str, message: str, hint: str = ""):
        super().__init__(Diagnostic(where, 0, 0, message, hint, "srtctl-dry-run"))


@dataclass(frozen=True)
class Srtctl:
    exe: Path
    checkout: Path
    commit: str | None
    backends: frozenset[str]  # the backend types this checkout's srtctl knows

    def supports(self, recipe: dict) -> bool:
        return backend_of(recipe) in self.backends


@dataclass(frozen=True)
class Verdict:
    accepted: bool
    message: str = ""  # srtctl's error, for a rejected recipe


def backend_of(recipe: dict) -> str:
    backend = recipe.get("backend")
    kind = backend.get("type") if isinstance(backend, dict) else None
    return kind if isinstance(kind, str) else DEFAULT_BACKEND


def backends(checkout: Path) -> frozenset[str]:
    """The backends srtctl at ``checkout`` implements: its ``src/srtctl/backends/<type>.py``."""
    folder = checkout / "src" / "srtctl" / "backends"
    if not folder.is_dir():
        raise SrtctlError(str(checkout), f"{checkout} has no src/srtctl/backends/: not an "
                          "srt-slurm checkout srtctl can be installed from",
                          "pass the root of an srt-slurm clone to --srtctl")
    return frozenset(p.stem for p in folder.glob("*.py") if p.stem not in ("__init__", "base"))


def _clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items()
            if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "PYTHONPYCACHEPREFIX",
                         "PIP_REQUIRE_VIRTUALENV")}


def _install(checkout: Path, venv: Path, say: Callable[[str], None]) -> None:
    say(f"installing srtctl from {checkout} into {venv} (once; needs the package index)")
    for argv, what in (([sys.executable, "-m", "venv", str(venv)], "creating the venv"),
                       ([str(venv / "bin" / "pip"), "install", "-q",
                         "--disable-pip-version-check", "-e", str(checkout)],
                        f"pip install -e {checkout}")):
        p = subprocess.run(argv, capture_output=True, text=True, env=_clean_env())
        if p.returncode != 0:
            tail = " | ".join((p.stderr or p.stdout).strip().splitlines()[-4:])
            raise SrtctlError(str(checkout), f"{what} failed (exit {p.returncode}): {tail}",
                              "install srtctl into the checkout's .venv yourself "
                              "(pip install -e .) and run again")


def installed_from(venv: Path) -> Path | None:
    """The folder srtctl was installed from into ``venv`` (pip's ``direct_url.json``)."""
    for record in venv.glob("lib/python*/site-packages/srtctl-*.dist-info/direct_url.json"):
        try:
            url = json.loads(record.read_text()).get("url", "")
        except (OSError, ValueError):
            continue
        if url.startswith("file://"):
            return Path(unquote(urlparse(url).path))
    return None


def locate(checkout: Path, *, say: Callable[[str], None] = print) -> Srtctl:
    """srtctl installed from ``checkout``: in its ``.venv`` or the launch cache's ``../venv``
    (``<sha>/src`` beside ``<sha>/venv``), else installed into ``<checkout>/.venv``."""
    check_checkout(checkout, "--srtctl")
    known = backends(checkout)

    def ours(venv: Path) -> bool:
        source = installed_from(venv)
        return (source is not None and source.resolve() == checkout.resolve()
                and os.access(venv / "bin" / "srtctl", os.X_OK))

    venv = next((v for v in (checkout / ".venv", checkout.parent / "venv") if ours(v)), None)
    exe = venv / "bin" / "srtctl" if venv is not None else None
    if exe is None:
        _install(checkout, checkout / ".venv", say)
        exe = checkout / ".venv" / "bin" / "srtctl"
        if not os.access(exe, os.X_OK):
            raise SrtctlError(str(checkout), f"no srtctl in {exe.parent} after installing",
                              "check that the checkout is srt-slurm (distribution srtctl)")
    return Srtctl(exe, checkout, commit_of(checkout), known)


def _env() -> dict[str, str]:
    env = {"PATH": SYSTEM_PATH, "HOME": os.environ.get("HOME", "/root"), "LANG": "C.UTF-8",
           "COLUMNS": COLUMNS, "TERM": "dumb", "NO_COLOR": "1"}
    for name in ("https_proxy", "HTTPS_PROXY", "http_proxy", "HTTP_PROXY"):
        env[name] = _UNREACHABLE
    env["no_proxy"] = env["NO_PROXY"] = ""
    return env


def parse(lines, names: list[str]) -> dict[str, Verdict]:
    """Verdicts from ``srtctl dry-run -f DIR``'s output, by file name: a recipe is rejected
    when its section has an error paragraph (wrapped lines joined again)."""
    found: dict[str, list[str] | None] = {}
    current, open_error = None, False
    for raw in lines:
        line = raw.rstrip("\n")
        m = _MARKER.match(line)
        if m:
            current, open_error = m.group(3), False
            found[current] = None
        elif current is None:
            continue
        elif found[current] is None and _ERROR in line:
            found[current] = [line.split(_ERROR, 1)[1].strip()]
            open_error = True
        elif open_error and line.strip():
            found[current].append(line.strip())
        else:
            open_error = False
    return {n: Verdict(True) if found[n] is None
            else Verdict(False, _INVALID_IN.sub("", " ".join(found[n])))
            for n in names if n in found}


def _run_folder(srtctl: Srtctl, folder: Path, names: list[str], tick: Callable[[], None],
                out: dict[str, Verdict], errors: list[str]) -> None:
    def lines():
        with tempfile.TemporaryFile("w+") as err:
            try:
                proc = subprocess.Popen([str(srtctl.exe), "dry-run", "-f", str(folder)],
                                        stdout=subprocess.PIPE, stderr=err, text=True,
                                        encoding="utf-8", errors="replace", env=_env(),
                                        cwd=folder.parent)
            except OSError as exc:
                errors.append(f"cannot run {srtctl.exe}: {exc.strerror or exc}")
                return
            for line in proc.stdout:
                if _MARKER.match(line.rstrip("\n")):
                    tick()
                yield line
            code = proc.wait()
            if code != 0:
                err.seek(0)
                tail = " | ".join(err.read().strip().splitlines()[-4:])
                errors.append(f"srtctl dry-run -f {folder} exited {code}: {tail}")

    verdicts = {n: Verdict(v.accepted, v.message.replace(f"{folder}/", ""))
                for n, v in parse(lines(), names).items()}
    missing = [n for n in names if n not in verdicts]
    if missing and not errors:
        errors.append(f"srtctl dry-run -f {folder} said nothing about {len(missing)} "
                      f"recipe(s), e.g. {missing[0]}")
    out.update(verdicts)


def dry_run(srtctl: Srtctl, texts: list[str], *, jobs: int | None = None,
            tick: Callable[[], None] = lambda: None) -> list[Verdict]:
    """srtctl's verdict on each recipe text, in order (identical texts are run once)."""
    unique = list(dict.fromkeys(texts))
    if not unique:
        return []
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(unique)))
    verdicts: dict[str, Verdict] = {}
    errors: list[str] = []
    lock = threading.Lock()

    def locked_tick():
        with lock:
            tick()

    with tempfile.TemporaryDirectory(prefix="infersweep-dry-run-") as tmp:
        # three empty levels above each folder: srtctl looks for srtslurm.yaml in the
        # working folder and its two parents, and must find none
        work = Path(tmp, "a", "b", "c")
        threads = []
        for j in range(jobs):
            folder = work / f"batch{j}"
            folder.mkdir(parents=True)
            names = []
            for i in range(j, len(unique), jobs):
                name = f"r{i:05d}.yaml"
                (folder / name).write_text(unique[i], encoding="utf-8")
                names.append(name)
            results: dict[str, Verdict] = {}
            t = threading.Thread(target=_run_folder, args=(srtctl, folder, names,
                                                           locked_tick, results, errors))
            threads.append((t, results))
            t.start()
        for t, results in threads:
            t.join()
            verdicts.update(results)
    if errors:
        raise SrtctlError(str(srtctl.exe), "; ".join(errors),
                          "run the same `srtctl dry-run -f FILE` by hand to see why")
    by_text = {text: verdicts[f"r{i:05d}.yaml"] for i, text in enumerate(unique)}
    return [by_text[t] for t in texts]
