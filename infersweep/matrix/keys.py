"""Config-key selection: exact keys and ``*``/``?`` globs, one implementation for every caller."""

from __future__ import annotations

from fnmatch import fnmatchcase

GLOB_CHARS = frozenset("*?[")


def is_glob(pattern: str) -> bool:
    return any(c in GLOB_CHARS for c in pattern)


def expand_keys(patterns: list[str], keys: list[str]) -> tuple[list[str], list[str]]:
    """(matched keys in first-seen order without duplicates, patterns that matched nothing).

    Glob matches come out in catalog order.
    """
    out: dict[str, None] = {}
    unmatched: list[str] = []
    for pattern in patterns:
        if is_glob(pattern):
            hits = [k for k in keys if fnmatchcase(k, pattern)]
        else:
            hits = [pattern] if pattern in keys else []
        if not hits:
            unmatched.append(pattern)
        out.update(dict.fromkeys(hits))
    return list(out), unmatched
