"""Reading a ``policy decide`` decision back in (``--decision`` of the changelog commands).

The value is a file path, ``-`` for standard input, or the JSON text itself (what a workflow
passes from ``steps.<id>.outputs.decision-json``). An existing file wins over JSON text. The
result must be a JSON object whose fields have the types ``policy decide`` writes; refs are
checked to be git revisions, never options.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from infersweep.diagnostics import Diagnostic, InputError
from infersweep.gitexec import is_revision

OPTION = "--decision"
_HINT = "pass the decision-json output of `infersweep policy decide` (a path, - or the JSON)"
STRINGS = ("decision", "diff-base", "diff-head", "head-sha", "base-ref", "base-sha")
BOOLEANS = ("trim-conc", "all-evals", "evals-only", "canary", "run")
REFS = ("diff-base", "diff-head")


def _fail(where: str, message: str, line: int = 0, col: int = 0) -> InputError:
    return InputError(Diagnostic(where, line, col, message, _HINT, "policy-decision"))


def _read(value: str) -> tuple[str, str]:
    """(where, JSON text) for a path, ``-`` or inline JSON."""
    if value == "-":
        return "<stdin>", sys.stdin.read()
    path = Path(value)
    try:
        is_file = path.is_file()
    except (OSError, ValueError):  # a name too long, a NUL byte: it is not a path
        is_file = False
    if is_file:
        try:
            return value, path.read_bytes().decode("utf-8")
        except OSError as exc:
            raise _fail(value, f"cannot read the decision file: {exc.strerror or exc}") from None
        except UnicodeDecodeError as exc:
            raise _fail(value, f"the decision file is not UTF-8 text (byte {exc.start})") from None
    return OPTION, value


def load_decision(value: str) -> dict[str, Any]:
    """The decision object, or a located :class:`InputError`."""
    where, text = _read(value)
    try:
        decision = json.loads(text)
    except json.JSONDecodeError as exc:
        if where == OPTION and value.lstrip()[:1] not in ("{", "["):
            raise _fail(OPTION, f"{value!r} is neither an existing file nor JSON text") from None
        raise _fail(where, f"not valid JSON: {exc.msg}", exc.lineno, exc.colno) from None
    except RecursionError:
        raise _fail(where, "not valid JSON: nested too deeply") from None
    if not isinstance(decision, dict):
        raise _fail(where, f"a decision is a JSON object, not {_kind(decision)}")
    problems = []
    for key in STRINGS:
        if key in decision and decision[key] is not None and not isinstance(decision[key], str):
            problems.append(f"'{key}' must be a string, not {_kind(decision[key])}")
    for key in BOOLEANS:
        if key in decision and not isinstance(decision[key], bool):
            problems.append(f"'{key}' must be true or false, not {_kind(decision[key])}")
    number = decision.get("pr-number")
    if number is not None and (isinstance(number, bool) or not isinstance(number, int)
                               or number < 1):
        problems.append(f"'pr-number' must be a positive integer or null, not {number!r}")
    for key in REFS:
        ref = decision.get(key)
        if isinstance(ref, str) and ref and not is_revision(ref):
            problems.append(f"'{key}' {ref!r} is not a git revision")
    if problems:
        raise InputError([Diagnostic(where, 0, 0, f"decision field {p}", _HINT,
                                     "policy-decision") for p in problems])
    return decision


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean",
            int: "a number", float: "a number", type(None): "null"}.get(type(value),
                                                                        type(value).__name__)
