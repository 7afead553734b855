"""``configs/runtimes.yaml``: the lock that pins every runtime source to a full commit.

:func:`load_lock` returns a :class:`Lock` (name -> :class:`Pin`) and raises
:class:`~infersweep.diagnostics.InputError` listing every problem: schema violations, and
commits that are short prefixes or not SHAs at all. Other stages import the pins from here;
nothing else in the repository spells a pinned commit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from infersweep.config.schema import validate_doc
from infersweep.diagnostics import Diagnostic, InputError
from infersweep.pins.packages import PackagePin
from infersweep.yamldoc import YamlDoc, load_yaml

LOCK_PATH = Path("configs") / "runtimes.yaml"
SCHEMA = "runtimes"
SRT_SLURM = "srt-slurm"

FULL_SHA = re.compile(r"[0-9a-f]{40}")
HEX = re.compile(r"[0-9a-fA-F]+")


@dataclass(frozen=True)
class Pin:
    """One pinned source: where it lives and the exact commit."""

    name: str
    repository: str
    commit: str
    ref: str = ""
    recipe_dialect: str | None = None
    mentions: tuple[str, ...] = ()
    verify: bool = True
    description: str = ""
    superseded: tuple[str, ...] = ()  # earlier pins, still quotable in the changelog
    line: int = 0  # where the commit is written in the lock
    col: int = 0

    @property
    def short(self) -> str:
        return self.commit[:12]


@dataclass
class Lock:
    path: str
    pins: dict[str, Pin]
    problems: list[Diagnostic] = field(default_factory=list)  # commit-format problems
    packages: dict[str, PackagePin] = field(default_factory=dict)  # pinned distributions

    @property
    def srt_slurm(self) -> Pin:
        return self.pins[SRT_SLURM]

    def valid_pins(self) -> list[Pin]:
        return [p for p in self.pins.values() if sha_problem(p.commit) is None]


def sha_problem(value: object) -> tuple[str, str, str] | None:
    """None for a full lowercase 40-hex SHA, else (rule, message, hint)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return ("pin-malformed-sha", f"commit {value!r} was read as a number",
                "quote the SHA and write all 40 characters: commit: \"<sha>\"")
    if not isinstance(value, str):
        return ("pin-malformed-sha", f"commit {value!r} is not a string",
                "write the full 40-character commit SHA")
    if FULL_SHA.fullmatch(value):
        return None
    if HEX.fullmatch(value):
        if len(value) == 40:
            return ("pin-malformed-sha", f"commit '{value}' has upper-case letters",
                    "write the SHA in lower case")
        if 4 <= len(value) < 40:
            return ("pin-short-sha",
                    f"commit '{value}' is a short SHA ({len(value)} characters); a pin must be "
                    "the full 40-character commit",
                    f"run `git rev-parse {value}` in a clone of the repository and paste the "
                    "full SHA; never extend a short SHA by hand")
        if len(value) > 40:
            return ("pin-malformed-sha",
                    f"commit '{value[:16]}...' has {len(value)} hex characters, not 40",
                    "a git commit SHA-1 has exactly 40; is this an image digest?")
    return ("pin-malformed-sha",
            f"commit '{value}' is not a commit SHA (40 hex characters)",
            "pin a commit, not a branch or tag name; put the branch or tag in 'ref:'")


def _text(value: object) -> str:
    if value is None or isinstance(value, (dict, list, bool)):
        return ""
    return str(value)


def _pin(doc: YamlDoc, name: str, entry: dict) -> Pin:
    line, col = doc.locate(("runtimes", name, "commit"))
    mentions = entry.get("mentions") or [name]
    return Pin(name=name, repository=str(entry.get("repository", "")),
               commit=_text(entry.get("commit")),
               ref=str(entry.get("ref", "") or ""), recipe_dialect=entry.get("recipe-dialect"),
               mentions=tuple(str(m) for m in mentions), verify=bool(entry.get("verify", True)),
               description=str(entry.get("description", "") or "").strip(),
               superseded=tuple(str(c).lower() for c in entry.get("superseded") or ()
                                if isinstance(c, str)),
               line=line, col=col)


def _package(doc: YamlDoc, name: str, entry: dict) -> PackagePin:
    line, col = doc.locate(("packages", name, "version"))
    return PackagePin(name=name, distribution=str(entry["distribution"]),
                      version=str(entry["version"]),
                      sha256=tuple(str(h) for h in entry["sha256"]), lock=str(entry["lock"]),
                      requires_python=str(entry.get("requires-python", "") or ""),
                      description=str(entry.get("description", "") or "").strip(),
                      line=line, col=col)


def parse_lock(doc: YamlDoc) -> Lock:
    """Validate a parsed lock. Raise InputError for any problem (all of them listed)."""
    lock = lock_with_problems(doc)
    if lock.problems:
        raise InputError(lock.problems)
    return lock


def lock_with_problems(doc: YamlDoc) -> Lock:
    """The lock plus every problem, without raising (verify reports bad SHAs per pin)."""
    sha_diags: list[Diagnostic] = []
    runtimes = doc.data.get("runtimes") if isinstance(doc.data, dict) else None
    pins: dict[str, Pin] = {}
    if isinstance(runtimes, dict):
        for name, entry in runtimes.items():
            if not isinstance(entry, dict):
                continue
            if "commit" in entry:
                problem = sha_problem(entry["commit"])
                if problem:
                    rule, message, hint = problem
                    sha_diags.append(doc.diag(("runtimes", name, "commit"),
                                              f"{name}: {message}", hint, rule=rule))
            for i, old in enumerate(entry.get("superseded") or []):
                problem = sha_problem(old)
                if problem:
                    rule, message, hint = problem
                    sha_diags.append(doc.diag(("runtimes", name, "superseded", i),
                                              f"{name}: superseded {message}", hint, rule=rule))
            pins[str(name)] = _pin(doc, str(name), entry)
    # The schema repeats the SHA rule for editors; report it once, with the better message.
    taken = {(d.line, d.col) for d in sha_diags}
    schema_diags = [d for d in validate_doc(doc, SCHEMA) if (d.line, d.col) not in taken]
    problems = sorted(set(schema_diags) | set(sha_diags))
    if schema_diags:
        # A lock whose shape is wrong cannot be trusted for anything.
        return Lock(doc.path, {}, problems)
    packages = {str(name): _package(doc, str(name), entry)
                for name, entry in (doc.data.get("packages") or {}).items()}
    return Lock(doc.path, pins, problems, packages)


def load_lock(path: str | Path = LOCK_PATH, *, strict: bool = True) -> Lock:
    """Load and validate the lock. ``strict=False`` keeps pins with bad SHAs in
    ``lock.problems`` instead of raising (still raises for a malformed file)."""
    doc = load_yaml(path)
    lock = lock_with_problems(doc)
    if strict and lock.problems:
        raise InputError(lock.problems)
    if not lock.pins and lock.problems:
        raise InputError(lock.problems)
    return lock
