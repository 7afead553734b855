"""SignalGuard: the first stop signal unwinds the main flow; later ones wait for cleanup."""

from __future__ import annotations

import os
import signal

import pytest

from infersweep.lifeline import Interrupted, SignalGuard, blocked


def test_first_signal_raises_then_later_ones_are_only_recorded():
    before = signal.getsignal(signal.SIGTERM)
    with SignalGuard() as g:
        with pytest.raises(Interrupted) as ei:
            os.kill(os.getpid(), signal.SIGTERM)
            signal.sigtimedwait([], 0)  # let the handler run
        assert ei.value.name == "SIGTERM" and ei.value.exit_code == 143
        os.kill(os.getpid(), signal.SIGINT)  # during cleanup: recorded, not raised
        assert g.received == signal.SIGTERM and g.exit_code == 143
    assert signal.getsignal(signal.SIGTERM) is before  # handlers restored


def test_deferred_guard_records_without_raising():
    with SignalGuard() as g:
        g.defer()
        os.kill(os.getpid(), signal.SIGINT)
    assert g.exit_code == 130


def test_blocked_signals_arrive_when_unblocked():
    with SignalGuard() as g:
        with pytest.raises(Interrupted), blocked():
            os.kill(os.getpid(), signal.SIGTERM)
            assert g.received is None  # held back while blocked
        assert g.received == signal.SIGTERM
