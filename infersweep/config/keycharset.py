"""The characters a config key may hold.

A key travels far: job names and titles, artifact and folder names, shell commands of the
workflows, the changelog, the store and the report. Every key of InferenceX's catalogs is
lower-case ASCII letters, digits, ``-`` and ``.`` (``glm5.1-fp8-b200-tilert``), beginning with a
letter or digit; a key outside that set (``x-$(id)``, ``x;rm -rf ~``, ``<img src=x>``,
``@maya``, ``../../tmp/evil``) is refused at its line, so nothing downstream has to quote it.
"""

from __future__ import annotations

import re

from infersweep.diagnostics import Diagnostic
from infersweep.printable import printable
from infersweep.yamldoc import YamlDoc

MAX_LENGTH = 100
KEY = re.compile(rf"[a-z0-9][a-z0-9.-]{{0,{MAX_LENGTH - 1}}}")
GLOB_CHARACTERS = "*?[]"  # the schema reports these (they are the changelog's globs)
RULE = "config-key-charset"
HINT = ("a config key is lower-case letters a-z, digits, '-' and '.', beginning with a letter "
        f"or digit, at most {MAX_LENGTH} characters, as every InferenceX key is "
        "(e.g. dsv4-fp4-mi355x-atom)")


def shown(text: str, limit: int = 60) -> str:
    """``text`` for a message: control and other unprintable characters escaped, cut short."""
    out = printable(text)
    return out if len(out) <= limit else out[:limit - 3] + "..."


def outside(key: str) -> list[str]:
    """The characters of ``key`` outside the key charset, once each, in order."""
    return list(dict.fromkeys(c for c in key if not re.fullmatch(r"[a-z0-9.-]", c)))


def key_problem(key: str) -> str | None:
    """Why ``key`` is not a config key, or None when it is one."""
    if KEY.fullmatch(key):
        return None
    if any(c in GLOB_CHARACTERS for c in key):
        return None  # the schema's glob message says it
    bad = outside(key)
    if bad:
        chars = ", ".join(f"'{shown(c)}'" for c in bad)
        return f"config key '{shown(key)}' has characters outside the key charset: {chars}"
    if len(key) > MAX_LENGTH:
        return f"config key '{shown(key)}' is longer than {MAX_LENGTH} characters"
    return f"config key '{shown(key)}' must begin with a letter or digit"


def check_key_charset(doc: YamlDoc, key: str) -> list[Diagnostic]:
    """A located error when ``key`` is not in the key charset."""
    problem = key_problem(key)
    if problem is None:
        return []
    return [doc.diag((key,), problem, HINT, rule=RULE, key=True)]
