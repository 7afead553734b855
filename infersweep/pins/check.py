"""``infersweep pins check``: the lock is well formed and nothing else names another commit.

How a reference to a pinned source is recognised (documented in docs/pins-and-policy.md):

* **commit-like string**: 7 to 40 hexadecimal characters standing alone (not part of a longer
  word, hex run or ``sha256:`` digest) that contain at least one digit and one letter
  (so decimal run ids, PR numbers, dates and English words such as ``deadbeef`` are not
  mistaken for commits; a 40-character string always counts);
* **reference to a source**: a commit-like string preceded, on its own line, by a mention of
  the source — one of its ``mentions`` words from the lock, case-insensitively — with no other
  commit-like string, and no version (``v1.0.36``) followed by a clause break, in between (for srt-slurm: ``srt-slurm``, ``srt_slurm``, ``srtslurm``,
  ``srtctl``; this covers ``SRT_SLURM_COMMIT=...`` assignments, ``srt-slurm pinned at ...``
  prose and ``github.com/<owner>/srt-slurm/commit/<sha>`` links, while ``vLLM 426e59f,
  srt-slurm v1.0.36 and aiperf be758d6`` blames neither commit on srt-slurm);
* **structured reference**: in YAML files, a mapping whose ``name`` is one of a source's
  mentions and whose ``version`` is commit-like (the catalog's ``router: {name: atomesh,
  version: ...}``).

A reference is fine when it is the pinned commit or a prefix (7+ characters) of any pinned
commit — or, in the append-only ``perf-changelog.yaml`` only, of a commit listed under the
source's ``superseded``; anything else is reported at its line and column. A line containing
``pins: ignore`` (e.g. in a YAML or HTML comment) is skipped. Scanned: the changelog, top-level
markdown, ``docs/``, ``benchmarks/``, ``runners/``, ``scripts/``, ``configs/``, ``.github/``
and the package source (except this module and the lock itself). Tests are not scanned:
they hold wrong SHAs on purpose.

Files that are not plain UTF-8 text are never skipped silently (a mismatched pin there would
pass): a file with NUL bytes or invalid UTF-8 is scanned with the undecodable bytes replaced; a
file above the size limit is searched for the sources' mentions without being parsed, and is
an error (``pins-unscanned``) if it has one, a warning otherwise; a file that cannot be read at
all is an error. ``strict`` makes every warning an error too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from infersweep.diagnostics import Diagnostic, InputError
from infersweep.pins.lock import LOCK_PATH, Lock, Pin, lock_with_problems
from infersweep.pins.packages import check_lock
from infersweep.yamldoc import load_yaml, parse_yaml

SCAN_FILES = ("perf-changelog.yaml",)
SCAN_GLOBS = ("*.md",)
SCAN_DIRS = ("docs", "benchmarks", "runners", "scripts", "configs", ".github", "infersweep")
SKIP_DIRS = {".git", ".venv", "venv", "node_modules", "__pycache__", ".pytest_cache",
             ".ruff_cache", "build", "dist", ".mypy_cache"}
SKIP_PATHS = ("infersweep/pins",)  # documents the rules with examples
MAX_BYTES = 2 * 1024 * 1024

COMMIT_LIKE = re.compile(r"(?<![0-9A-Za-z_])[0-9a-fA-F]{7,40}(?![0-9A-Za-z_])")
DIGEST_PREFIX = re.compile(r"sha(256|384|512):$", re.IGNORECASE)
# A version (v1.0.36, 1.3.0.dev2026) after a mention is that source's reference already, so a
# commit-like string in a later clause is about something else ("v1.0.36 (abc1234)" is not).
CLAUSE_BREAK = re.compile(r"[,;]|\s(?:and|with|plus)\s", re.IGNORECASE)
VERSION_LIKE = re.compile(r"(?<![\w.])v?\d+\.\d+(?:\.[0-9A-Za-z]+)*(?![\w.])")
IGNORE_PRAGMA = re.compile(r"pins:\s*ignore", re.IGNORECASE)
CHANGELOG = "perf-changelog.yaml"  # append-only history: superseded pins stay quotable


@dataclass(frozen=True)
class Reference:
    path: str
    line: int
    col: int
    token: str
    sources: tuple[str, ...]


@dataclass(frozen=True)
class Unscanned:
    """A file the check could not (fully) look into, and why."""

    path: str
    reason: str
    mentions: tuple[str, ...] = ()  # pinned sources it names anyway (size-limited files)


@dataclass
class Report:
    lock: Lock | None
    problems: list[Diagnostic] = field(default_factory=list)
    references: list[Reference] = field(default_factory=list)  # the ones that matched
    files: int = 0
    unscanned: list[Unscanned] = field(default_factory=list)  # warnings, unless strict


def is_commit_like(token: str) -> bool:
    if len(token) == 40:
        return True
    return any(c.isdigit() for c in token) and any(c.isalpha() for c in token)


def files_to_scan(root: Path, lock_path: Path) -> list[Path]:
    found: set[Path] = set()
    for name in SCAN_FILES:
        if (root / name).is_file():
            found.add(root / name)
    for pattern in SCAN_GLOBS:
        found.update(p for p in root.glob(pattern) if p.is_file())
    for top in SCAN_DIRS:
        base = root / top
        if not base.is_dir():
            continue
        for p in base.rglob("*"):
            rel = p.relative_to(root)
            if any(part in SKIP_DIRS for part in rel.parts):
                continue
            if rel.as_posix().startswith(SKIP_PATHS) or not p.is_file():
                continue
            found.add(p)
    lock_resolved = lock_path.resolve()
    return sorted(p for p in found if p.resolve() != lock_resolved)


def _read_text(path: Path, max_bytes: int = MAX_BYTES) -> tuple[str | None, str]:
    """(text, "") for a file to scan, or (None, why not). Text that is not clean UTF-8 (NUL
    bytes, invalid sequences) is still returned, undecodable bytes replaced: a pin written
    in ASCII is found in it all the same."""
    try:
        size = path.stat().st_size
        if size > max_bytes:
            return None, f"larger than {_size(max_bytes)} ({_size(size)})"
        raw = path.read_bytes()
    except OSError as exc:
        return None, f"cannot be read: {exc.strerror or exc}"
    return raw.decode("utf-8", errors="replace"), ""


def _size(n: int) -> str:
    return f"{n / 2**20:.1f} MiB" if n >= 2**20 else f"{n} bytes"


def mentions_in_file(path: Path, pins: list[Pin], chunk: int = 1 << 20) -> tuple[str, ...]:
    """The pinned sources a (too large to scan) file names, found by streaming its bytes."""
    words = {p.name: [m.lower().encode() for m in p.mentions] for p in pins}
    overlap = max((len(w) for ws in words.values() for w in ws), default=1)
    found: set[str] = set()
    tail = b""
    try:
        with open(path, "rb") as fh:
            while block := fh.read(chunk):
                window = tail + block.lower()
                found.update(n for n, ws in words.items() if any(w in window for w in ws))
                tail = window[-overlap:]
    except OSError:
        return tuple(p.name for p in pins)  # cannot tell: assume the worst
    return tuple(n for n in words if n in found)
def _known(token: str, pins: list[Pin], *, history: bool = False) -> bool:
    """The token is (a prefix of) a pinned commit, or in the changelog a superseded one."""
    t = token.lower()
    commits = [p.commit for p in pins]
    if history:
        commits += [c for p in pins for c in p.superseded]
    return any(c.startswith(t) for c in commits)


def _mismatch(rel: str, line: int, col: int, token: str, about: list[Pin],
              lock_rel: str) -> Diagnostic:
    if len(about) == 1:
        message = (f"'{token}' refers to {about[0].name} but {lock_rel} pins "
                   f"{about[0].commit}")
    else:
        pinned = ", ".join(f"{p.name} {p.commit}" for p in about)
        message = (f"'{token}' refers to {' or '.join(p.name for p in about)} but matches "
                   f"no pin in {lock_rel} ({pinned})")
    return Diagnostic(rel, line, col, message,
                      "quote the pinned commit, or bump the pin in the lock and run "
                      "`infersweep pins verify`", "pin-mismatch")


def _ignored(line: str) -> bool:
    return IGNORE_PRAGMA.search(line) is not None


def scan_text(rel: str, text: str, pins: list[Pin], lock_rel: str, report: Report,
              *, history: bool = False) -> None:
    """Line rule: a commit-like string refers to the sources mentioned between it and the
    previous commit-like string on its line (or the line start)."""
    for lineno, line in enumerate(text.splitlines(), start=1):
        lower = line.lower()
        if not any(m.lower() in lower for p in pins for m in p.mentions) or _ignored(line):
            continue
        version_ends = [v.end() for v in VERSION_LIKE.finditer(line)]
        segment_start = 0
        for m in COMMIT_LIKE.finditer(line):
            token = m.group(0)
            if not is_commit_like(token) or DIGEST_PREFIX.search(line[: m.start()]):
                continue
            start = max([segment_start, *(
                e for e in version_ends
                if e <= m.start() and CLAUSE_BREAK.search(line[e:m.start()]))])
            segment = lower[start:m.start()]
            segment_start = m.end()
            about = [p for p in pins if any(w.lower() in segment for w in p.mentions)]
            if not about:
                continue
            if _known(token, pins, history=history):
                report.references.append(Reference(rel, lineno, m.start() + 1, token,
                                                   tuple(p.name for p in about)))
            else:
                report.problems.append(_mismatch(rel, lineno, m.start() + 1, token, about,
                                                 lock_rel))


def _walk(data, pointer=()):
    if isinstance(data, dict):
        yield pointer, data
        for k, v in data.items():
            yield from _walk(v, pointer + (k,))
    elif isinstance(data, list):
        for i, v in enumerate(data):
            yield from _walk(v, pointer + (i,))


def scan_yaml(rel: str, text: str, pins: list[Pin], lock_rel: str, report: Report) -> None:
    """Structured rule: ``{name: <mention>, version: <commit-like>}`` mappings."""
    try:
        doc = parse_yaml(text, rel)
    except InputError:
        return  # not this command's business: `infersweep validate` reports broken YAML
    for pointer, mapping in _walk(doc.data):
        name, version = mapping.get("name"), mapping.get("version")
        if not isinstance(name, str) or not isinstance(version, str):
            continue
        about = [p for p in pins if name.lower() in (m.lower() for m in p.mentions)]
        token = version.strip()
        if not about or not COMMIT_LIKE.fullmatch(token) or not is_commit_like(token):
            continue
        line, col = doc.locate(pointer + ("version",))
        if _known(token, pins, history=rel == CHANGELOG):
            report.references.append(Reference(rel, line, col, token,
                                               tuple(p.name for p in about)))
        else:
            report.problems.append(_mismatch(rel, line, col, token, about, lock_rel))


def check(root: str | Path = ".", lock: str | Path | None = None, *, strict: bool = False,
          max_bytes: int = MAX_BYTES) -> Report:
    """Every problem with the lock and every mismatching reference under ``root``.

    A file that could hold a pin but could not be scanned is a problem; other files that
    could not be scanned are listed in ``report.unscanned`` (problems too when ``strict``)."""
    root = Path(root)
    lock_path = Path(lock) if lock is not None else root / LOCK_PATH
    lock_rel = _rel(lock_path, root)
    doc = load_yaml(lock_path)
    doc.path = lock_rel
    parsed = lock_with_problems(doc)
    report = Report(parsed, list(parsed.problems))
    for package in parsed.packages.values():
        report.problems += check_lock(package, root, lock_rel)
    pins = parsed.valid_pins()
    if not pins:
        return report
    for path in files_to_scan(root, lock_path):
        rel = _rel(path, root)
        text, why = _read_text(path, max_bytes)
        if text is None:
            _unscanned(report, rel, path, why, pins, strict)
            continue
        report.files += 1
        before = len(report.problems)
        scan_text(rel, text, pins, lock_rel, report, history=rel == CHANGELOG)
        if path.suffix in (".yaml", ".yml"):
            scan_yaml(rel, text, pins, lock_rel, report)
        # one report per place even when both rules see it
        report.problems[before:] = sorted(set(report.problems[before:]))
    report.problems = sorted(set(report.problems))
    return report


def _unscanned(report: Report, rel: str, path: Path, why: str, pins: list[Pin],
               strict: bool) -> None:
    readable = not why.startswith("cannot be read")
    about = mentions_in_file(path, pins) if readable else tuple(p.name for p in pins)
    report.unscanned.append(Unscanned(rel, why, about if readable else ()))
    if not readable:
        report.problems.append(Diagnostic(
            rel, 0, 0, f"not scanned for pinned commits: {why}",
            "make the file readable, or move it out of the scanned folders", "pins-unscanned"))
    elif about or strict:
        named = f" and mentions {', '.join(about)}" if about else ""
        report.problems.append(Diagnostic(
            rel, 0, 0, f"not scanned for pinned commits: {why}{named}",
            "split the file, or raise the limit with --max-file-size", "pins-unscanned"))


def _rel(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)
