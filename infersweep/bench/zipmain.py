"""The entry point of the bundled client (``python3 infersweep-bench.pyz serve ...``).

Only ``serve`` and ``recompute``: the commands that run where the benchmark runs. Errors are
reported as ``infersweep`` reports them (:func:`infersweep.cli.run`).
"""

from __future__ import annotations

import click

from infersweep import __version__
from infersweep.bench import runtime
from infersweep.bench.commands import recompute_cmd, serve
from infersweep.cli import run


def _version_text() -> str:
    build = runtime.build()
    rt = runtime.describe()
    sha = f", sha256 {build['sha256']}" if "sha256" in build else ""
    libs = ", ".join(f"{k} {v}" for k, v in rt.items())
    return f"infersweep-bench {__version__} ({build['kind']}{sha}; {libs})"


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def cli():
    """The infersweep benchmark client in one file: runs on any Python >= 3.10, using orjson,
    uvloop, numpy and rich where installed and the standard library otherwise."""


cli.add_command(serve, "serve")
cli.add_command(recompute_cmd, "recompute")


@cli.command("version")
def version_cmd():
    """Print the client's version, its build (and sha256), and the libraries in use."""
    click.echo(_version_text())


def main(argv=None) -> None:
    run(cli, argv, "infersweep-bench.pyz")
