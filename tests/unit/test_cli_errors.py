"""The last line of defence in ``main``: an OSError no command turned into a message still
gives one line and exit 1 for users, and the exception itself with ``INFERSWEEP_DEBUG=1`` (which
the test suite sets, so such a bug fails its test instead of hiding)."""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest

from infersweep.cli import cli, main


@pytest.fixture
def oserror_command():
    """A command with a missing error message: it lets an OSError escape (a test double for
    a bug, registered only for this test)."""

    @click.command()
    def broken():
        open("/nonexistent-folder/file")  # noqa: SIM115

    cli.add_command(broken, "broken-for-test")
    yield
    cli.commands.pop("broken-for-test")


def test_escaping_oserror_is_one_line_and_exit_1(oserror_command, monkeypatch, capsys):
    monkeypatch.delenv("INFERSWEEP_DEBUG")
    with pytest.raises(SystemExit) as info:
        main(["broken-for-test"])
    err = capsys.readouterr().err
    assert info.value.code == 1
    assert err.strip().splitlines() == [
        "error: No such file or directory: '/nonexistent-folder/file' (unexpected "
        "FileNotFoundError; set INFERSWEEP_DEBUG=1 to see where it happened and report it)"]


@pytest.mark.parametrize("value", ["1", "yes", "true"])
def test_debug_shows_the_exception(oserror_command, monkeypatch, value):
    monkeypatch.setenv("INFERSWEEP_DEBUG", value)
    with pytest.raises(FileNotFoundError):
        main(["broken-for-test"])


def test_programming_errors_are_not_hidden(monkeypatch):
    @click.command()
    def buggy():
        raise KeyError("a bug")

    cli.add_command(buggy, "buggy-for-test")
    monkeypatch.delenv("INFERSWEEP_DEBUG")
    try:
        with pytest.raises(KeyError):
            main(["buggy-for-test"])
    finally:
        cli.commands.pop("buggy-for-test")


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_github_output_on_a_full_disk(tmp_path, run_cli, monkeypatch):
    """GITHUB_OUTPUT that cannot take the write (a full disk): a message and exit 1."""
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"ref": "refs/heads/feature"}))
    monkeypatch.setenv("GITHUB_OUTPUT", "/dev/full")
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    code, out, err = run_cli("policy", "decide", "--event-name", "push", "--event-path", event)
    assert code == 1
    assert ("error: /dev/full: [output-path] cannot write --github-output: No space left on "
            "device (free some space on that disk or write elsewhere)") in err
