"""Child processes that stop with their parent, and a parent that turns SIGTERM/SIGINT into an
orderly stop.

Supervisors (a CI runner, Slurm, a launcher) signal only the main PID. So that no child keeps
loading a server after its parent is gone, a forked child calls :func:`die_with_parent`: on
Linux the kernel kills it when the parent dies (``PR_SET_PDEATHSIG``); elsewhere a thread
watches for the parent's exit. The parent wraps its work in :class:`SignalGuard`, which turns
the first SIGTERM or SIGINT into :class:`Interrupted` (so ``finally`` blocks run and children
are told to stop) and only records later ones while the parent cleans up.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import threading
import time

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)
_PR_SET_PDEATHSIG = 1


class Interrupted(BaseException):
    """The process got a stop signal. A BaseException, like KeyboardInterrupt, so that
    ``except Exception`` blocks do not swallow it."""

    def __init__(self, signum: int):
        self.signum = signum
        super().__init__(signal.Signals(signum).name)

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


def die_with_parent(parent_pid: int) -> None:
    """Call first thing in a forked child: the child is killed when ``parent_pid`` exits."""
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)  # the process' own symbols: libc's prctl
        if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
            _watch_parent(parent_pid)
    else:  # pragma: no cover - exercised on macOS only
        _watch_parent(parent_pid)
    if os.getppid() != parent_pid:  # the parent died before the request took effect
        os._exit(1)


def _watch_parent(parent_pid: int, period: float = 0.2) -> None:
    def watch():
        while os.getppid() == parent_pid:
            time.sleep(period)
        os._exit(1)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


@contextlib.contextmanager
def blocked(signals=STOP_SIGNALS):
    """Hold stop signals back (around a fork, so a child never runs the parent's handler
    before installing its own); pending ones are delivered on exit."""
    old = signal.pthread_sigmask(signal.SIG_BLOCK, signals)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def unblock(signals=STOP_SIGNALS) -> None:
    """For a forked child, once its own handlers are in place."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, signals)


class SignalGuard:
    """Within ``with SignalGuard() as g:``, the first SIGTERM/SIGINT raises
    :class:`Interrupted` in the main thread; after that (or after :meth:`defer`) signals are
    only recorded in ``g.received`` so that cleanup is not cut short. Outside the main thread
    (where handlers cannot be set) it does nothing."""

    def __init__(self, signals=STOP_SIGNALS):
        self.signals = signals
        self.received: int | None = None
        self._raise = True
        self._old: dict = {}

    def __enter__(self) -> SignalGuard:
        if threading.current_thread() is threading.main_thread():
            for s in self.signals:
                self._old[s] = signal.signal(s, self._handle)
        return self

    def __exit__(self, *exc) -> None:
        for s, h in self._old.items():
            signal.signal(s, h)
        self._old.clear()

    def _handle(self, signum, frame) -> None:
        if self.received is None:
            self.received = signum
        if self._raise:
            self._raise = False
            raise Interrupted(signum)

    def defer(self) -> None:
        """From now on, record signals without raising."""
        self._raise = False

    @property
    def exit_code(self) -> int | None:
        return None if self.received is None else 128 + self.received
