"""Pinned Python distributions (``packages:`` in ``configs/runtimes.yaml``) and their locks.

A runtime that ships as a wheel rather than a git commit (the agentic replay client) is
pinned by distribution, exact version and the sha256 of the file pip installs; its whole
environment is a hash lock beside it (``lock:``, one ``name==version --hash=sha256:...`` line a
distribution), installed with ``pip --require-hashes --no-deps``. ``pins check`` proves the
lock agrees with the pin; ``pins verify`` downloads the pinned file from the index and proves
its digest is still the pinned one, in seconds, before any GPU job installs it.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from infersweep.diagnostics import Diagnostic

SHA256 = re.compile(r"[0-9a-f]{64}")
_LOCK_LINE = re.compile(r"(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)==(?P<version>\S+)(?P<rest>.*)")
_HASH = re.compile(r"--hash=sha256:(\S+)")


def normalise(name: str) -> str:
    """PEP 503 normalised distribution name."""
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass(frozen=True)
class PackagePin:
    """One pinned distribution: the file pip installs, and the lock of its environment."""

    name: str
    distribution: str
    version: str
    sha256: tuple[str, ...]
    lock: str  # path of the hash lock, relative to the repository root
    requires_python: str = ""
    description: str = ""
    line: int = 0  # where the version is written in runtimes.yaml
    col: int = 0

    @property
    def requirement(self) -> str:
        return f"{self.distribution}=={self.version}"


@dataclass(frozen=True)
class LockedDistribution:
    name: str  # normalised
    version: str
    hashes: tuple[str, ...]
    line: int


def read_lock(path: Path) -> tuple[dict[str, LockedDistribution], list[Diagnostic]]:
    """Every ``name==version --hash=...`` line of a hash lock, and a located problem for each
    line that is not one (pip would refuse the whole file)."""
    found: dict[str, LockedDistribution] = {}
    problems: list[Diagnostic] = []
    try:
        text = path.read_text()
    except OSError as exc:
        return {}, [Diagnostic(str(path), 0, 0, f"cannot read the lock: {exc.strerror or exc}",
                               "run scripts/agentic-client-lock to write it",
                               rule="package-lock-missing")]
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        m = _LOCK_LINE.fullmatch(line)
        hashes = tuple(_HASH.findall(m["rest"])) if m else ()
        if not m or not hashes or any(not SHA256.fullmatch(h) for h in hashes):
            problems.append(Diagnostic(
                str(path), n, 1, "expected 'name==version --hash=sha256:<64 hex>' (one or more "
                "hashes)", "regenerate the lock with scripts/agentic-client-lock",
                rule="package-lock-line"))
            continue
        key = normalise(m["name"])
        if key in found:
            problems.append(Diagnostic(str(path), n, 1, f"{m['name']} is locked twice (first on "
                                       f"line {found[key].line})", "keep one line per distribution",
                                       rule="package-lock-line"))
            continue
        found[key] = LockedDistribution(key, m["version"], hashes, n)
    return found, problems


def check_lock(pin: PackagePin, root: Path, lock_file: str) -> list[Diagnostic]:
    """The lock exists, parses, and names the pinned version of the distribution with every
    pinned digest among its hashes."""
    path = root / pin.lock
    locked, problems = read_lock(path)
    if problems:
        return problems
    entry = locked.get(normalise(pin.distribution))
    if entry is None:
        return [Diagnostic(lock_file, pin.line, pin.col,
                           f"{pin.name}: the lock {pin.lock} does not list {pin.distribution}",
                           "regenerate the lock with scripts/agentic-client-lock",
                           rule="package-lock-mismatch")]
    out = []
    if entry.version != pin.version:
        out.append(Diagnostic(
            str(path), entry.line, 1,
            f"{pin.distribution}=={entry.version} here, but the pin is {pin.version} "
            f"({lock_file}:{pin.line})", "regenerate the lock with scripts/agentic-client-lock",
            rule="package-lock-mismatch"))
    missing = [h for h in pin.sha256 if h not in entry.hashes]
    if missing:
        out.append(Diagnostic(
            str(path), entry.line, 1,
            f"{pin.distribution}: the pinned digest {missing[0][:12]}... is not among the "
            "lock's hashes", "pin and lock must name the same file: regenerate the lock",
            rule="package-lock-mismatch"))
    return out


@dataclass
class PackageResult:
    name: str
    requirement: str
    status: str  # ok | changed | not-found | unreachable
    message: str
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def verify_package(pin: PackagePin, *, index_args: list[str] | None = None,
                   timeout: float = 120.0) -> PackageResult:
    """Download the pinned file (no dependencies) and compare its sha256 with the pin.

    ``index_args`` are pip's index options (``--index-url URL``, ``--no-index --find-links
    DIR``); none means pip's configured index."""
    start = time.monotonic()

    def result(status: str, message: str) -> PackageResult:
        return PackageResult(pin.name, pin.requirement, status, message,
                             round(time.monotonic() - start, 3))

    with tempfile.TemporaryDirectory(prefix="infersweep-pkg-") as scratch:
        cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
               "--disable-pip-version-check", "--no-cache-dir", "--dest", scratch,
               *(index_args or []), pin.requirement]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                                  stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            return result("unreachable", f"no answer from the index within {timeout:g} s")
        if proc.returncode != 0:
            err = proc.stderr
            if re.search(r"No matching distribution|Could not find a version", err):
                return result("not-found", f"{pin.requirement} is not on the index (yanked, "
                                           "deleted, or never published)")
            last = [ln for ln in err.strip().splitlines() if ln.strip()
                    and not ln.startswith("WARNING")]
            return result("unreachable", f"pip download failed: {(last or ['?'])[-1].strip()}")
        files = list(Path(scratch).iterdir())
        digests = {f.name: hashlib.sha256(f.read_bytes()).hexdigest() for f in files}
    good = [n for n, d in digests.items() if d in pin.sha256]
    if good:
        return result("ok", f"{good[0]} has the pinned sha256")
    got = ", ".join(f"{n} sha256:{d}" for n, d in digests.items()) or "no file"
    return result("changed", f"{pin.requirement} on the index is not the pinned file: {got}")


def interpreter_fits(requires_python: str, version: tuple[int, int]) -> bool:
    """Whether ``major.minor`` satisfies a ``>=A.B,<C.D`` specifier (the only forms pins use)."""
    for part in filter(None, (p.strip() for p in requires_python.split(","))):
        m = re.fullmatch(r"(>=|<|<=|>|==)\s*(\d+)\.(\d+)", part)
        if not m:
            continue
        want = (int(m[2]), int(m[3]))
        op = m[1]
        if not {">=": version >= want, "<": version < want, "<=": version <= want,
                ">": version > want, "==": version == want}[op]:
            return False
    return True
