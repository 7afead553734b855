"""Text from a file or the store made safe to print on a terminal.

A config key, a label or a path read from outside may hold control characters (an escape
sequence that recolours or clears the terminal, a carriage return that overwrites the line)
or invisible format characters (a right-to-left override). :func:`printable` writes each of
them as its escape (``\\x1b``, ``\\r``, ``\\u202e``) so what is shown is what is stored.
"""

from __future__ import annotations


def printable(text: str) -> str:
    """``text`` with every character that is not printable written as its escape."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii")
                   for c in text)


def printable_cells(rows):
    """Table rows with every text cell passed through :func:`printable`."""
    return [[printable(c) if isinstance(c, str) else c for c in row] for row in rows]
