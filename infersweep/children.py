"""Child processes that never outlive their parent.

A supervisor (a CI runner, Slurm, a launcher) signals only the main PID. Two mechanisms make
every child stop with it, whatever the exit path:

* on Linux each child asks the kernel, before it runs anything, for SIGTERM when its parent
  dies (``prctl(PR_SET_PDEATHSIG)``) — this holds even when the parent is SIGKILLed;
* :func:`signals_exit` turns SIGTERM, SIGINT and SIGHUP in the parent into ``SystemExit``, so
  the ``finally`` that calls :func:`stop_all` runs instead of the process dying on the spot.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Iterator

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


def _libc_prctl():
    if not sys.platform.startswith("linux"):
        return None
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    except OSError:  # pragma: no cover - no C library to ask
        return None
    return libc.prctl


def _die_with(parent_pid: int, prctl):
    """A ``preexec_fn``: runs in the child between fork and exec."""

    def setup() -> None:
        if prctl is not None:
            prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
        if os.getppid() != parent_pid:  # the parent died before the request took effect
            os._exit(1)

    return setup


def spawn(cmd: list[str], **popen_kwargs) -> subprocess.Popen:
    """``Popen(cmd)`` for a child that is sent SIGTERM when this process dies."""
    return subprocess.Popen(cmd, preexec_fn=_die_with(os.getpid(), _libc_prctl()),
                            **popen_kwargs)


def stop_all(procs: list[subprocess.Popen], timeout: float = 5.0) -> None:
    """SIGTERM every running child (and SIGCONT, so a stopped one acts on it at once, as a
    shell's ``kill`` does for stopped jobs), wait up to ``timeout`` seconds in all, then
    SIGKILL."""
    import time

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
def signals_exit() -> Iterator[None]:
    """While active, a stop signal raises ``SystemExit(128 + signum)`` in the main thread (the
    shell's convention for "killed by signal"), so cleanup in ``finally`` blocks runs."""

    def handler(signum, frame):
        raise SystemExit(128 + signum)

    previous = {}
    for sig in STOP_SIGNALS:
        with contextlib.suppress(ValueError, OSError):  # not the main thread: leave as is
            previous[sig] = signal.signal(sig, handler)
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)
