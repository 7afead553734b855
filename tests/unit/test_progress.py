"""The shared progress display: a rich bar on a terminal, plain lines otherwise, or nothing."""

from __future__ import annotations

import io
import os

from infersweep import progress


def test_plain_lines_when_not_a_terminal():
    out = io.StringIO()
    with progress.bar(20, "requests", stream=out) as bar:
        for k in range(21):
            bar.update(k, failed=0)
        bar.update(18, failed=2)
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("progress: 0/20 requests (0 failed)")
    assert lines[-1].startswith("progress: 20/20 requests (2 failed)")
    assert len(lines) == 12  # one per tenth and the final counts, not one per update
    assert "\r" not in out.getvalue() and "\x1b" not in out.getvalue()


def test_disabled_shows_nothing():
    out = io.StringIO()
    with progress.bar(5, "requests", enabled=False, stream=out) as bar:
        bar.update(5)
    assert out.getvalue() == ""


def test_a_terminal_gets_a_live_rich_bar():
    master, slave = os.openpty()
    tty = os.fdopen(slave, "w")
    try:
        assert progress.is_terminal(tty)
        with progress.bar(8, "requests", stream=tty) as bar:
            bar.update(3, failed=1)
        tty.flush()
        shown = os.read(master, 65536).decode(errors="replace")
    finally:
        tty.close()
        os.close(master)
    assert "requests" in shown and "4/8" in shown and "1 failed" in shown
    assert "\x1b[" in shown  # redrawn in place with terminal control sequences


def test_the_click_option_keeps_older_spellings():
    import click
    from click.testing import CliRunner

    @click.command()
    @progress.option("--disable-tqdm")
    def cmd(no_progress):
        click.echo(f"off={no_progress}")

    r = CliRunner()
    assert r.invoke(cmd, ["--disable-tqdm"]).output == "off=True\n"
    assert r.invoke(cmd, ["--no-progress"]).output == "off=True\n"
    assert r.invoke(cmd, []).output == "off=False\n"
