"""Progress while a sweep runs: one rewritten status line on a terminal, plain lines otherwise.

Kept to two calls (``status`` and ``line``) so that it can move onto a shared progress module
without touching the sweep.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO


class Display:
    def __init__(self, stream: TextIO | None = None, *, tty: bool | None = None):
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty() if tty is None else tty
        self._width = 0
        self._last_plain = ""
        self._last_plain_at = 0.0

    def status(self, text: str) -> None:
        """A transient state: rewritten in place on a terminal, at most every 10 s otherwise
        (and only when it changed)."""
        if self.tty:
            pad = max(0, self._width - len(text))
            self.stream.write("\r" + text + " " * pad)
            self._width = len(text) + pad  # what the terminal shows now
            self.stream.flush()
            return
        now = time.monotonic()
        if text != self._last_plain and now - self._last_plain_at >= 10:
            self._last_plain, self._last_plain_at = text, now
            self.line(text)

    def line(self, text: str) -> None:
        """A permanent line (a point finished, a row finished)."""
        if self.tty and self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self._width = 0
        self.stream.write(text + "\n")
        self.stream.flush()
