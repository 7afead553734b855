"""Errors that point at a place in a file: ``path:line:col: message (hint)``.

Every stage reports bad input through :class:`Diagnostic` so that the CLI prints one
uniform, clickable format (the one ruff and compilers use) and exits 1 with every
problem listed, not just the first.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class Diagnostic:
    path: str
    line: int  # 1-based; 0 when the problem is not tied to a line
    col: int  # 1-based; 0 when unknown
    message: str
    hint: str = ""
    rule: str = ""

    def __str__(self) -> str:
        where = self.path
        if self.line:
            where += f":{self.line}:{self.col or 1}"
        text = f"{where}: "
        if self.rule:
            text += f"[{self.rule}] "
        text += self.message
        if self.hint:
            text += f" ({self.hint})"
        return text


class InputError(Exception):
    """Bad input from a user: one or more diagnostics, never a traceback."""

    def __init__(self, diagnostics: list[Diagnostic] | Diagnostic | str):
        if isinstance(diagnostics, str):
            diagnostics = [Diagnostic("<input>", 0, 0, diagnostics)]
        elif isinstance(diagnostics, Diagnostic):
            diagnostics = [diagnostics]
        self.diagnostics = list(diagnostics)
        super().__init__("\n".join(str(d) for d in self.diagnostics))


def did_you_mean(word: str, choices) -> str:
    """A short 'did you mean X?' hint, or '' when nothing is close."""
    import difflib

    close = difflib.get_close_matches(str(word), [str(c) for c in choices], n=1)
    return f"did you mean '{close[0]}'?" if close else ""
