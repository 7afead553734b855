"""The append-only rules for perf-changelog.yaml, in one place.

A pull request may only append entries at the end of the file. Judged line by line
between the merge-base and the head (not the base branch's tip, so a PR that is behind
main is not blamed for main's newer entries), which catches what a diff of added lines
misses: edited or deleted whitespace-only lines, entries inserted in the middle, a
missing final newline, stray blank lines. Formatting rules judge only the appended lines:
old lines may not be edited, so they can never make an append non-compliant.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from infersweep.config.schema import validate_doc
from infersweep.diagnostics import Diagnostic
from infersweep.yamldoc import YamlDoc, parse_yaml

ENTRY_START = "- config-keys:"
SEPARATOR_HINT = "entries are separated by exactly one empty line"
WHITESPACE_RULE = "changelog-whitespace"  # an old line changed in whitespace only


@dataclass
class Appended:
    """The entries a change appends, parsed with their real line numbers."""

    doc: YamlDoc | None
    entries: list[dict]
    first_line: int  # 1-based line of the first appended entry in the head file


def _show(line: str) -> str:
    return repr(line.rstrip("\n"))


def _blank(line: str) -> bool:
    return line.strip() == ""


def compare(path: str, base: str, head: str) -> tuple[list[Diagnostic], int]:
    """Diagnostics for anything but a pure append; and the index of the first new line.

    A change to old lines that only touches whitespace (an edited whitespace-only
    separator, a blank line deleted or inserted) gets the rule ``changelog-whitespace``,
    one of :data:`LAYOUT_RULES`: `changelog check` refuses it like any edit, `changelog
    matrix` only warns, and the returned index still points at the first appended line.
    """
    diags: list[Diagnostic] = []
    base_lines = base.splitlines(keepends=True)
    head_lines = head.splitlines(keepends=True)
    # a base without a final newline may gain one on its last line
    if base_lines and not base_lines[-1].endswith("\n") and len(head_lines) >= len(base_lines) \
            and head_lines[len(base_lines) - 1] == base_lines[-1] + "\n":
        base_lines[-1] += "\n"
    if head_lines[: len(base_lines)] == base_lines:
        return diags, len(base_lines)
    n_base = len(base_lines)
    opcodes, start = _align(base_lines, head_lines)
    restore = ("the changelog is append-only: restore the line exactly as on the base "
               "branch and add a new entry at the end instead")
    for op, a0, a1, b0, b1 in opcodes:
        if op == "equal":
            continue
        if op == "insert" and a0 == n_base:
            start = b0
            continue
        if op == "replace":
            paired = min(a1 - a0, b1 - b0)
            for k in range(paired):
                old, new = base_lines[a0 + k], head_lines[b0 + k]
                ws = old.strip() == new.strip()
                what = "whitespace changed" if ws else f"was {_show(old)}, now {_show(new)}"
                diags.append(Diagnostic(
                    path, b0 + k + 1, 1, f"existing line {a0 + k + 1} was edited ({what})",
                    restore, WHITESPACE_RULE if ws else "changelog-edit"))
            for k, old in enumerate(base_lines[a0 + paired:a1]):
                diags.append(_deleted(path, b1, a0 + paired + k + 1, old))
            if a1 == n_base and b1 - b0 > paired:  # the rest of the replacement is appended
                start = b0 + paired
            elif b1 - b0 > paired:
                diags.append(_inserted(path, b0 + paired, b1, a1, head_lines))
        elif op == "delete":
            for k, old in enumerate(base_lines[a0:a1]):
                diags.append(_deleted(path, b0 + 1 if b0 < len(head_lines) else b0, a0 + k + 1,
                                      old))
        elif op == "insert":
            diags.append(_inserted(path, b0, b1, a0, head_lines))
    return diags, start


MAX_SPLITS = 64  # appended-entry boundaries tried when aligning an edit (the last ones)


def _cost(opcodes, n_base: int) -> int:
    """Lines an alignment blames on edits (a trailing insertion after the base is the
    append, not an edit)."""
    return sum(max(a1 - a0, b1 - b0) for op, a0, a1, b0, b1 in opcodes
               if op != "equal" and not (op == "insert" and a0 == n_base))


def _tail_pulled(opcodes, n_base: int, n_head: int) -> bool:
    """The diff ends with an insertion followed by fewer equal lines that end both files:
    the signature of base lines matched to identical lines of an appended entry."""
    if len(opcodes) < 2:
        return False
    op, a0, a1, b0, b1 = opcodes[-1]
    before = opcodes[-2]
    return (op == "equal" and a1 == n_base and b1 == n_head and before[0] in ("insert", "replace")
            and before[4] - before[3] > b1 - b0)


def _align(base_lines: list[str], head_lines: list[str]) -> tuple[list[tuple], int]:
    """The opcodes that explain the head as the base with the fewest edited lines, plus an
    append; and where the append starts (0-based head line).

    A plain diff of the whole files can pair the base's last lines with identical lines at
    the end of a new entry: an edited ``pr-link: XXX`` plus an appended entry whose
    ``pr-link`` is ``XXX`` then reads as lines "inserted in the middle" before the base's
    last line. When the plain diff ends that way (an insertion, then fewer equal lines that
    close both files), the base is also aligned with each prefix of the head that ends where
    an appended entry could begin (an entry start, with its separator line), and the
    alignment that blames the fewest lines wins; on a tie, the plain diff. A real insertion
    in the middle is followed by the whole rest of the base, so it keeps the plain diff.
    """
    n_base = len(base_lines)

    def opcodes(k: int) -> list[tuple]:
        return difflib.SequenceMatcher(a=base_lines, b=head_lines[:k],
                                       autojunk=False).get_opcodes()

    best, best_k = opcodes(len(head_lines)), len(head_lines)
    best_cost = _cost(best, n_base)
    if not _tail_pulled(best, n_base, len(head_lines)):
        return best, best_k
    diverged = next(b0 for op, _, _, b0, _ in best if op != "equal")
    splits = []
    for j in range(len(head_lines) - 1, diverged, -1):
        if head_lines[j].startswith(ENTRY_START):
            splits.append(j - 1 if j - 1 > diverged and _blank(head_lines[j - 1]) else j)
            if len(splits) == MAX_SPLITS:
                break
    for k in splits:
        if best_cost == 0:
            break
        found = opcodes(k)
        cost = _cost(found, n_base)
        if cost < best_cost:
            best, best_k, best_cost = found, k, cost
    return best, best_k


def _inserted(path: str, b0: int, b1: int, a0: int, head_lines: list[str]) -> Diagnostic:
    ws = all(_blank(line) for line in head_lines[b0:b1])
    return Diagnostic(path, b0 + 1, 1, f"{b1 - b0} {'empty ' if ws else ''}line(s) inserted "
                      f"before existing line {a0 + 1}",
                      "append new entries at the end of the file, not in the middle",
                      WHITESPACE_RULE if ws else "changelog-insert")


def _deleted(path: str, head_line: int, base_line: int, old: str) -> Diagnostic:
    return Diagnostic(path, max(head_line, 1), 1,
                      f"existing line {base_line} was deleted ({_show(old)})",
                      "the changelog is append-only: restore the line",
                      WHITESPACE_RULE if _blank(old) else "changelog-delete")


# rules about how appended lines look, not what they say: `changelog check` enforces them,
# `changelog matrix` only warns (a run is never refused for its formatting)
LAYOUT_RULES = frozenset({"changelog-newline", "changelog-blank", "changelog-separator",
                          "changelog-bytes", WHITESPACE_RULE})


def check_layout(path: str, base: str, head: str, start: int) -> list[Diagnostic]:
    """Formatting rules for the appended lines (from 0-based line index ``start``).

    Only the appended lines are judged, so a compliant append exists after any history:
    one empty line may open the append whatever the base ends with (an empty or
    whitespace-only line of the base may not be edited, so it cannot count against the
    new separator), and an append needs no separator of its own after a base that
    already ends with one.
    """
    diags: list[Diagnostic] = []
    lines = head.splitlines(keepends=True)
    new = lines[start:]
    if not new:
        return [Diagnostic(path, len(lines) or 1, 1, "no entries were appended",
                           "append an entry naming the config keys to run", "changelog-empty")]
    if not head.endswith("\n"):
        diags.append(Diagnostic(path, len(lines), len(lines[-1]) + 1,
                                "the file does not end with a newline",
                                "add a newline after the last line", "changelog-newline"))
    base_lines = base.splitlines()
    base_ends_blank = not base_lines or base_lines[-1].strip() == ""
    previous_blank = base_ends_blank
    for ch, name in (("\r", "carriage return"), ("\t", "tab"), ("\0", "NUL byte")):
        hits = [(start + k + 1, line.index(ch) + 1) for k, line in enumerate(new) if ch in line]
        if hits:  # one diagnostic per kind: a CRLF file would give one per line
            more = f" (and {len(hits) - 1} more line(s))" if len(hits) > 1 else ""
            diags.append(Diagnostic(path, *hits[0], f"{name} in an appended line{more}",
                                    "use LF line endings and spaces only", "changelog-bytes"))
    for offset, raw in enumerate(new):
        number = start + offset + 1
        text = raw.rstrip("\n")
        blank = text.strip() == ""
        if blank and text:
            diags.append(Diagnostic(path, number, 1, "whitespace-only line",
                                    "leave separator lines completely empty",
                                    "changelog-blank"))
        # the first appended line may be the separator even after a blank base line
        if blank and previous_blank and offset > 0:
            diags.append(Diagnostic(path, number, 1, "more than one empty line",
                                    SEPARATOR_HINT, "changelog-blank"))
        if text.startswith(ENTRY_START) and not previous_blank:
            diags.append(Diagnostic(path, number, 1, "entry does not follow an empty line",
                                    SEPARATOR_HINT, "changelog-separator"))
        previous_blank = blank
    if new[-1].strip() == "":
        diags.append(Diagnostic(path, len(lines), 1, "the file ends with an empty line",
                                "end the file right after the last entry's final newline",
                                "changelog-blank"))
    first = next((t for t in new if t.strip()), "")
    if first and not first.startswith(ENTRY_START):
        diags.append(Diagnostic(path, start + new.index(first) + 1, 1,
                                f"appended text must start a new entry with '{ENTRY_START}'",
                                "edits to existing entries are not allowed",
                                "changelog-entry"))
    return diags


def parse_appended(path: str, head: str, start: int) -> tuple[Appended, list[Diagnostic]]:
    """Parse the appended lines as a YAML list of entries and validate each one."""
    lines = head.splitlines(keepends=True)
    tail = "".join(lines[start:])
    doc = parse_yaml(tail, path, line_offset=start)
    if doc.data is None:
        return Appended(doc, [], start + 1), [Diagnostic(
            path, start + 1, 1, "no entries were appended",
            "append an entry naming the config keys to run", "changelog-empty")]
    if not isinstance(doc.data, list):
        return Appended(doc, [], start + 1), [doc.diag(
            (), "appended text is not a list of entries", f"start each entry with '{ENTRY_START}'",
            rule="changelog-entry")]
    diags = validate_doc(doc, "perf-changelog")
    entries = doc.data
    for i, entry in enumerate(entries):
        if isinstance(entry, dict) and entry.get("append-only") and any(
                entry.get(k) for k in ("evals-only", "all-evals", "eval-min-prefill-ep")):
            diags.append(doc.diag((i, "append-only"), "append-only cannot be combined with "
                                  "evals-only, all-evals or eval-min-prefill-ep",
                                  "split it into separate pull requests",
                                  rule="changelog-append-only"))
    flags = [bool(e.get("append-only")) for e in entries if isinstance(e, dict)]
    if any(flags) and not all(flags):
        regular = flags.index(False)
        diags.append(doc.diag((regular,), "append-only entries cannot share a pull request "
                              "with regular entries", "split them into separate pull requests",
                              rule="changelog-append-only", key=True))
    return Appended(doc, entries, start + 1), diags
