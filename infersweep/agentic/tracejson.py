"""Where a value sits in a JSON text: a pointer (keys and list indexes) to line and column.

Trace files are parsed with orjson, which keeps no positions. Positions are only needed for
the few values a check refuses, so they are found afterwards: :func:`locate` scans the raw
text once along the pointer (strings are read with the standard library's own string
scanner, so escapes and braces inside strings cannot mislead it) and returns the offset of
the key or value the pointer names.
"""

from __future__ import annotations

import re
from json.decoder import scanstring

_WS = re.compile(r"[ \t\n\r]*")
# Anything that is neither a string nor a container: numbers, true, false, null.
_SCALAR = re.compile(r"[^\s,\]\}\"\[\{:]+")


class _Lost(Exception):
    """The text does not have the shape the pointer expects (it was changed, or is not
    the text that was parsed); the caller falls back to the document's start."""


def _skip_ws(text: str, i: int) -> int:
    return _WS.match(text, i).end()


def _skip_value(text: str, i: int) -> int:
    """The offset just after the JSON value starting at ``i``."""
    ch = text[i:i + 1]
    if ch == '"':
        return scanstring(text, i + 1)[1]
    if ch in ("{", "["):
        close = "}" if ch == "{" else "]"
        i = _skip_ws(text, i + 1)
        if text[i:i + 1] == close:
            return i + 1
        while True:
            if ch == "{":
                i = _skip_ws(text, scanstring(text, i + 1)[1])
                i = _skip_ws(text, i + 1)  # the ':'
            i = _skip_ws(text, _skip_value(text, i))
            nxt = text[i:i + 1]
            if nxt == ",":
                i = _skip_ws(text, i + 1)
            elif nxt == close:
                return i + 1
            else:
                raise _Lost
    m = _SCALAR.match(text, i)
    if not m:
        raise _Lost
    return m.end()


def _child(text: str, i: int, step) -> tuple[int, int]:
    """(key offset, value offset) of ``step`` inside the container starting at ``i``."""
    ch = text[i:i + 1]
    if ch == "{" and isinstance(step, str):
        i = _skip_ws(text, i + 1)
        found = None
        while text[i:i + 1] == '"':
            key, after = scanstring(text, i + 1)
            value_at = _skip_ws(text, _skip_ws(text, after) + 1)
            if key == step:
                found = (i, value_at)  # the last of equal keys wins, as in the parsed data
            i = _skip_ws(text, _skip_value(text, value_at))
            if text[i:i + 1] != ",":
                break
            i = _skip_ws(text, i + 1)
        if found is None:
            raise _Lost
        return found
    if ch == "[" and isinstance(step, int):
        i = _skip_ws(text, i + 1)
        for _ in range(step):
            i = _skip_ws(text, _skip_value(text, i))
            if text[i:i + 1] != ",":
                raise _Lost
            i = _skip_ws(text, i + 1)
        if text[i:i + 1] in ("]", ""):
            raise _Lost
        return i, i
    raise _Lost


def locate(text: str, pointer: tuple = (), *, key: bool = False, start: int = 0) -> int:
    """Offset in ``text`` of the value at ``pointer`` (of its key with ``key=True``).

    ``start`` is where the document begins (one line of a JSON Lines file). A pointer the
    text does not have gives the deepest position that was found."""
    i = _skip_ws(text, start)
    best = i
    try:
        for n, step in enumerate(pointer):
            key_at, i = _child(text, i, step)
            best = key_at if key and n == len(pointer) - 1 else i
    except (_Lost, ValueError, IndexError):
        pass
    return best


def line_col(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column (in characters) of ``offset``."""
    line = text.count("\n", 0, offset) + 1
    col = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, col
