"""Child processes that stop with their parent, and parents that turn stop signals into an
orderly stop. The one place that knows how a process of ours ends.

Supervisors (a CI runner, Slurm, a launcher) signal only the main PID. So that no child keeps
loading a server after its parent is gone:

* a forked child calls :func:`die_with_parent`, and a child started with :func:`spawn` does the
  same between fork and exec: on Linux the kernel signals it when the parent dies
  (``PR_SET_PDEATHSIG``, which holds even when the parent is SIGKILLed); elsewhere a forked
  child's thread watches for the parent's exit;
* the parent wraps its work in :class:`SignalGuard` (the first SIGTERM or SIGINT raises
  :class:`Interrupted`, later ones are only recorded while it cleans up) or in
  :func:`signals_exit` (a stop signal raises ``SystemExit(128 + signum)``), so the ``finally``
  that stops its children (:func:`stop_all`) runs instead of the process dying on the spot.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)
# what a server process of ours also stops on (a closed terminal sends SIGHUP)
SERVER_STOP_SIGNALS = (*STOP_SIGNALS, signal.SIGHUP)
_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


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


def _parent_death_signal(signum: int) -> bool:
    """Ask the kernel to send ``signum`` to this process when its parent dies (Linux only)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)  # the process' own symbols: libc's prctl
        return libc.prctl(_PR_SET_PDEATHSIG, signum, 0, 0, 0) == 0
    except (OSError, AttributeError):  # pragma: no cover - no C library to ask
        return False


def die_with_parent(parent_pid: int) -> None:
    """Call first thing in a forked child: the child is killed when ``parent_pid`` exits."""
    if not _parent_death_signal(signal.SIGKILL):
        _watch_parent(parent_pid)
    if os.getppid() != parent_pid:  # the parent died before the request took effect
        os._exit(1)


def spawn(cmd: list[str], **popen_kwargs) -> subprocess.Popen:
    """``Popen(cmd)`` for a child that is sent SIGTERM when this process dies (so it can stop
    its own children in turn)."""
    parent = os.getpid()

    def setup() -> None:  # runs in the child between fork and exec
        _parent_death_signal(signal.SIGTERM)
        if os.getppid() != parent:
            os._exit(1)

    return subprocess.Popen(cmd, preexec_fn=setup, **popen_kwargs)


def stop_all(procs: list[subprocess.Popen], timeout: float = 5.0) -> None:
    """SIGTERM every running child (and SIGCONT, so a stopped one acts on it at once, as a
    shell's ``kill`` does for stopped jobs), wait up to ``timeout`` seconds in all, then
    SIGKILL."""
    for p in procs:
        if p.poll() is None:
            with contextlib.suppress(OSError):
                p.terminate()
                os.kill(p.pid, signal.SIGCONT)
    deadline = time.monotonic() + timeout
    for p in procs:
        try:
            p.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            with contextlib.suppress(OSError):
                p.kill()
            p.wait()


@contextlib.contextmanager
def signals_exit(signals=SERVER_STOP_SIGNALS) -> Iterator[None]:
    """While active, a stop signal raises ``SystemExit(128 + signum)`` in the main thread (the
    shell's convention for "killed by signal"), so cleanup in ``finally`` blocks runs."""

    def handler(signum, frame):
        raise SystemExit(128 + signum)

    previous = {}
    for sig in signals:
        with contextlib.suppress(ValueError, OSError):  # not the main thread: leave as is
            previous[sig] = signal.signal(sig, handler)
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


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
