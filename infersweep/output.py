"""How a command shows its diagnostics: ``--output-format text`` (the default, for people)
or ``github`` (also GitHub Actions workflow commands, so each problem is annotated on the
pull request's diff, at its file and line).

One renderer for every command that has the option (``validate``, ``changelog check``,
``pins check``, ``results check``): :func:`annotation` turns a
:class:`~infersweep.diagnostics.Diagnostic` into ``::error file=…,line=…,col=…,title=…::
message``. The errors a command raises as :class:`~infersweep.diagnostics.InputError` are
rendered by the CLI's one error handler (:func:`infersweep.cli.run`), which asks
:func:`selected` which format the command was given.

Escaping follows the runner's workflow-command parser: in the message ``%``, ``\\r`` and
``\\n`` are percent-encoded; in a property value ``:`` and ``,`` are too, since they separate
properties.
"""

from __future__ import annotations

import os
from pathlib import Path

import click

from infersweep.diagnostics import Diagnostic

TEXT, GITHUB = "text", "github"
FORMATS = (TEXT, GITHUB)
ERROR, WARNING, NOTICE = "error", "warning", "notice"

_selected = TEXT
_command = ""  # "infersweep validate": the title of its annotations


def escape_data(text: str) -> str:
    """A workflow command's message."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A workflow command's property value (``file=``, ``title=``)."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _file(path: str) -> str | None:
    """The repository file a diagnostic names, as the ``file=`` GitHub expects (relative to
    the checkout), or None for a place that is no file (``<git>``, ``--decision``)."""
    if not path or path.startswith(("<", "-")):
        return None
    if "@" in path and not os.path.exists(path):  # ``configs/x.yaml@HEAD``: a file at a ref
        head, _, _ = path.rpartition("@")
        path = head or path
    p = Path(path)
    if p.is_absolute():
        try:
            p = p.resolve().relative_to(Path.cwd().resolve())
        except ValueError:
            return str(p)
    return p.as_posix()


def annotation(diag: Diagnostic, level: str = ERROR, title: str = "") -> str:
    """One workflow command for one diagnostic."""
    props = []
    file = _file(diag.path)
    if file:
        props.append(f"file={escape_property(file)}")
        if diag.line:
            props.append(f"line={diag.line}")
            props.append(f"col={diag.col or 1}")
    title = title or " ".join(t for t in (_command, f"[{diag.rule}]" if diag.rule else "") if t)
    if title:
        props.append(f"title={escape_property(title)}")
    message = diag.message + (f" ({diag.hint})" if diag.hint else "")
    if not file and diag.path and not diag.path.startswith("<"):
        message = f"{diag.path}: {message}"  # an option (--decision) or a host:port
    head = f"::{level} {','.join(props)}" if props else f"::{level}"
    return f"{head}::{escape_data(message)}"


def annotations(diags, level: str = ERROR, title: str = "") -> str:
    return "\n".join(annotation(d, level, title) for d in diags)


def select(fmt: str, command: str = "") -> None:
    """Remember the format the running command was given (the CLI resets it per run)."""
    global _selected, _command
    _selected = fmt if fmt in FORMATS else TEXT
    _command = command


def selected() -> str:
    return _selected


def echo_annotations(diags, level: str = ERROR, title: str = "", err: bool = False) -> None:
    """Print workflow commands for ``diags`` when ``github`` was selected: on stdout, or on
    stderr (``err``) for a command whose stdout is data (the runner reads both)."""
    if _selected == GITHUB and diags:
        click.echo(annotations(diags, level, title), err=err)


def warn(diags, title: str = "", err: bool = False) -> None:
    """``warning: …`` lines on stderr and, with ``github``, ``::warning`` commands (a plain
    string is a warning tied to no file)."""
    diags = list(diags)
    for d in diags:
        click.echo(f"warning: {d}", err=True)
    echo_annotations([d if isinstance(d, Diagnostic) else Diagnostic("", 0, 0, str(d))
                      for d in diags], WARNING, title, err=err)


def _remember(ctx, param, value):
    select(value, ctx.command_path)
    return value


def output_format_option(f):
    """``--output-format [text|github]`` on a command whose problems are diagnostics."""
    return click.option(
        "--output-format", type=click.Choice(FORMATS), default=TEXT, show_default=True,
        is_eager=True, expose_value=False, callback=_remember,
        help="github: also print each problem as a GitHub Actions ::error/::warning "
             "workflow command (an annotation at its file and line).")(f)
