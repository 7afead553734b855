"""The ``infersweep`` command line: a click group whose commands are thin calls into stages.

Sub-commands are imported lazily so that ``infersweep matrix`` does not pay for the
benchmark client's imports (numpy, uvloop) and stays fast in a fresh process.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys

import click

from infersweep import __version__
from infersweep.diagnostics import InputError

# command name -> "module:attribute" of a click command or group
COMMANDS: dict[str, str] = {
    "validate": "infersweep.config.commands:validate",
    "matrix": "infersweep.matrix.commands:matrix",
    "explain": "infersweep.matrix.commands:explain",
    "changelog": "infersweep.changelog.commands:changelog",
    "policy": "infersweep.policy.commands:policy",
    "pins": "infersweep.pins.commands:pins",
    "bench": "infersweep.bench.commands:bench",
    "sim": "infersweep.sim.commands:sim",
    "recipe": "infersweep.recipe.commands:recipe",
    "sweep": "infersweep.sweep.commands:sweep",
    "launch": "infersweep.launch.commands:launch",
    "results": "infersweep.results.commands:results",
    "eval": "infersweep.evals.commands:eval_group",
    "stage": "infersweep.stage.stagecmd:stage",
    "store": "infersweep.store.commands:store",
    "report": "infersweep.report.commands:report",
    "replay": "infersweep.replay.commands:replay",
    "agentic": "infersweep.agentic.commands:agentic",
}


class LazyGroup(click.Group):
    def list_commands(self, ctx):
        """The commands that exist: a name whose module is not in this build is left out
        (checked without importing it, so ``--help`` stays fast)."""
        return sorted({name for name, target in COMMANDS.items()
                       if importlib.util.find_spec(target.split(":")[0]) is not None}
                      | set(self.commands))

    def get_command(self, ctx, name):
        if name in self.commands:
            return self.commands[name]
        target = COMMANDS.get(name)
        if target is None:
            return None
        module, attr = target.split(":")
        try:
            return getattr(importlib.import_module(module), attr)
        except ModuleNotFoundError as exc:
            if exc.name and exc.name.startswith("infersweep"):
                return None  # stage not built yet
            raise


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="infersweep")
def cli():
    """LLM-inference benchmark sweeps: configs, matrix, launch, results."""


DEBUG_ENV = "INFERSWEEP_DEBUG"


def _debug() -> bool:
    return os.environ.get(DEBUG_ENV, "").strip().lower() not in ("", "0", "false", "no")


def _describe_os_error(exc: OSError) -> str:
    """``cannot ...: <reason>: '<file>'`` from an OSError, without the Errno noise."""
    reason = exc.strerror or str(exc) or type(exc).__name__
    names = [n for n in (exc.filename, exc.filename2) if n is not None]
    where = " -> ".join(f"'{os.fsdecode(n)}'" for n in names)
    return f"{reason}: {where}" if where else reason


def main(argv=None) -> None:
    """Run the CLI. Bad input exits 1 with located messages; an operating-system failure
    that no command turned into a message (a bug in its error reporting) still gets one line
    and exit 1, unless ``INFERSWEEP_DEBUG=1`` asks for the exception and its traceback."""
    run(cli, argv, "infersweep")


def run(group: click.Command, argv, prog_name: str) -> None:
    """:func:`main` for any click command (the bundled benchmark client uses it too)."""
    from infersweep import output

    output.select(output.TEXT)  # a command with --output-format selects its own
    try:
        group.main(args=argv, prog_name=prog_name, standalone_mode=False)
    except InputError as exc:
        output.echo_annotations(exc.diagnostics)
        for diag in exc.diagnostics:
            click.echo(f"error: {diag}", err=True)
        n = len(exc.diagnostics)
        if n > 1:
            click.echo(f"{n} errors", err=True)
        sys.exit(1)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except BrokenPipeError:
        sys.exit(0)
    except OSError as exc:
        if _debug():
            raise
        click.echo(f"error: {_describe_os_error(exc)} (unexpected {type(exc).__name__}; set "
                   f"{DEBUG_ENV}=1 to see where it happened and report it)", err=True)
        sys.exit(1)
    finally:
        output.select(output.TEXT)
