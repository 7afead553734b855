"""Progress: rewritten in place on a terminal, plain and rate-limited lines otherwise."""

from __future__ import annotations

import io

from infersweep.sweep.display import Display


def test_terminal_rewrites_one_line_and_clears_it_for_permanent_lines():
    out = io.StringIO()
    d = Display(out, tty=True)
    d.status("row 1: RUNNING, 0/6 points")
    d.status("row 1: 1/6")
    d.line("row 1: c=4 written")
    text = out.getvalue()
    assert text.startswith("\rrow 1: RUNNING, 0/6 points\rrow 1: 1/6" + " " * 16)
    assert text.endswith("\r" + " " * 26 + "\rrow 1: c=4 written\n")


def test_plain_output_prints_changed_status_at_most_every_ten_seconds(monkeypatch):
    clock = iter([100.0, 101.0, 112.0, 113.0])
    monkeypatch.setattr("infersweep.sweep.display.time.monotonic", lambda: next(clock))
    out = io.StringIO()
    d = Display(out, tty=False)
    d.status("a")   # printed
    d.status("b")   # too soon
    d.status("b")   # printed (12 s later)
    d.status("b")   # unchanged
    d.line("done")
    assert out.getvalue() == "a\nb\ndone\n"
