"""``infersweep agentic client``: install and show the pinned replay client."""

from __future__ import annotations

import sys
from pathlib import Path

import click


@click.group("client")
def client():
    """The pinned replay client (packages.agentic-client in configs/runtimes.yaml)."""


_VENV_HELP = ("The client's own venv [default: $INFERSWEEP_AGENTIC_CLIENT_VENV, else "
              "~/.cache/infersweep/agentic-client]. Never the engine's environment.")


@client.command("install")
@click.option("--venv", type=click.Path(file_okay=False, path_type=Path), default=None,
              help=_VENV_HELP)
@click.option("--python", "python", default=sys.executable, show_default="this Python",
              help="The interpreter to build the venv from (the pin says which fit).")
@click.option("--root", default=None, type=click.Path(file_okay=False, path_type=Path),
              help="Repository root (where configs/ is) [default: here, else the one this "
                   "infersweep runs from].")
def install_cmd(venv, python, root):
    """Install the pinned client from its hash lock (pip --require-hashes --no-deps); a venv
    already holding this pin is kept. About 1.1 GB and a minute or two from a warm cache."""
    from infersweep.agentic.client import default_venv, install

    got = install(venv or default_venv(), python=python, root=root,
                  echo=lambda m: click.echo(m, err=True))
    click.echo(f"{got.distribution}=={got.version} ready: {got.aiperf}")


@client.command("show")
@click.option("--venv", type=click.Path(file_okay=False, path_type=Path), default=None,
              help=_VENV_HELP)
@click.option("--root", default=None, type=click.Path(file_okay=False, path_type=Path),
              help="Repository root [default: here, else the one this infersweep runs from].")
def show_cmd(venv, root):
    """Where the installed client is (exit 1, saying how to install it, when it is not)."""
    from infersweep.agentic.client import locate

    got = locate(venv, root)
    click.echo(f"{got.distribution}=={got.version} {got.aiperf}")
