"""Progress of long commands: a live display on a terminal, plain lines otherwise."""

from __future__ import annotations

import io

from infersweep import progress


def test_status_lines_on_a_terminal_keep_permanent_lines():
    out = io.StringIO()
    d = progress.StatusLines(out, tty=True)
    d.status("row 1: RUNNING, 0/6 points")
    d.status("row 1: 1/6")
    d.line("row 1: c=4 written")
    d.close()
    assert "row 1: c=4 written\n" in out.getvalue()


def test_plain_status_lines_print_a_changed_state_at_most_every_ten_seconds(monkeypatch):
    clock = iter([100.0, 101.0, 112.0, 113.0])
    monkeypatch.setattr(progress.time, "monotonic", lambda: next(clock))
    out = io.StringIO()
    d = progress.StatusLines(out, tty=False)
    d.status("a")   # printed
    d.status("b")   # too soon
    d.status("b")   # printed (12 s later)
    d.status("b")   # unchanged
    d.line("done")
    d.close()
    assert out.getvalue() == "a\nb\ndone\n"


def test_plain_bar_prints_one_line_per_tenth():
    out = io.StringIO()
    with progress.bar(100, "requests", stream=out) as bar:
        for done in range(0, 101, 5):
            bar.update(done)
    lines = out.getvalue().splitlines()
    assert len(lines) == 11
    assert lines[-1].startswith("progress: 100/100 requests (0 failed)")
