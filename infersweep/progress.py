"""Progress of a long command: a live bar (rich) on a terminal, plain lines otherwise.

Every long command reports progress the same way::

    with progress.bar(total, "requests", enabled=not no_progress) as bar:
        while working:
            bar.update(done, failed=failed)

On a terminal the bar redraws in place a few times a second; when stderr is a file or a pipe
(CI logs) it prints one line at each tenth of the work, so logs stay short and readable.
``enabled=False`` shows nothing. :func:`option` is the matching click flag.

Work that is a sequence of states rather than a count (a sweep: a job pending, running, a
point written) uses :class:`StatusLines` instead: ``status(text)`` is a transient state (a
rich spinner line on a terminal; a plain line at most every 10 s otherwise, only when it
changed), ``line(text)`` a permanent one.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

import click


def option(*aliases: str):
    """``--no-progress`` (plus any older spellings, e.g. ``--disable-tqdm``)."""
    return click.option("--no-progress", *aliases, "no_progress", is_flag=True,
                        help="Show no progress (a live bar on a terminal, plain lines "
                             "otherwise).")


class _Plain:
    """One line per tenth of the work, and the final counts."""

    def __init__(self, total: int, label: str, stream: TextIO):
        self.total, self.label, self.stream = max(total, 1), label, stream
        self.t0 = time.monotonic()
        self.last_tenth = -1
        self.last = (0, 0)
        self.printed = None

    def update(self, done: int, failed: int = 0) -> None:
        self.last = (done, failed)
        tenth = min(10, 10 * (done + failed) // self.total)
        if tenth != self.last_tenth:
            self.last_tenth = tenth
            self._line(done, failed)

    def _line(self, done: int, failed: int) -> None:
        self.printed = (done, failed)
        el = time.monotonic() - self.t0
        self.stream.write(f"progress: {done + failed}/{self.total} {self.label} "
                          f"({failed} failed) after {el:.1f}s\n")
        self.stream.flush()

    def close(self) -> None:
        if self.printed != self.last:  # the final counts, once
            self._line(*self.last)


class _Rich:
    def __init__(self, total: int, label: str, stream: TextIO):
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        self._p = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                           TextColumn("{task.fields[failed]} failed"), TimeElapsedColumn(),
                           TextColumn("{task.fields[rate]}"),
                           console=Console(file=stream), refresh_per_second=4)
        self._task = self._p.add_task(label, total=total, failed=0, rate="")
        self.t0 = time.monotonic()
        self._p.start()

    def update(self, done: int, failed: int = 0) -> None:
        el = time.monotonic() - self.t0
        rate = f"{(done + failed) / el:.1f}/s" if el > 0 else ""
        self._p.update(self._task, completed=done + failed, failed=failed, rate=rate)

    def close(self) -> None:
        self._p.stop()


class _Off:
    def update(self, done: int, failed: int = 0) -> None:
        pass

    def close(self) -> None:
        pass


def is_terminal(stream: TextIO) -> bool:
    """Whether a live bar can be drawn: a terminal, and rich to draw it (the bundled
    benchmark client may run where rich is not installed: plain lines then)."""
    try:
        from rich.console import Console
    except ImportError:
        return False

    return Console(file=stream).is_terminal


@contextmanager
def bar(total: int, label: str, *, enabled: bool = True,
        stream: TextIO | None = None) -> Iterator[_Plain | _Rich | _Off]:
    stream = stream or sys.stderr
    if not enabled:
        shown = _Off()
    elif is_terminal(stream):
        shown = _Rich(total, label, stream)
    else:
        shown = _Plain(total, label, stream)
    try:
        yield shown
    finally:
        shown.close()


class StatusLines:
    """Transient states and permanent lines (see the module docstring)."""

    PLAIN_EVERY_S = 10.0

    def __init__(self, stream: TextIO | None = None, *, tty: bool | None = None):
        self.stream = stream or sys.stderr
        self.tty = is_terminal(self.stream) if tty is None else tty
        self._console = None
        self._spinner = None
        self._last_plain = ""
        self._last_plain_at = float("-inf")

    def _rich(self):
        if self._console is None:
            from rich.console import Console

            self._console = Console(file=self.stream, force_terminal=True, highlight=False)
        return self._console

    def status(self, text: str) -> None:
        if self.tty:
            if self._spinner is None:
                self._spinner = self._rich().status(text)
                self._spinner.start()
            else:
                self._spinner.update(text)
            return
        now = time.monotonic()
        if text != self._last_plain and now - self._last_plain_at >= self.PLAIN_EVERY_S:
            self._last_plain, self._last_plain_at = text, now
            self.line(text)

    def line(self, text: str) -> None:
        if self.tty:
            self._rich().print(text, markup=False, soft_wrap=True)
            return
        self.stream.write(text + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self._spinner is not None:
            self._spinner.stop()
            self._spinner = None
