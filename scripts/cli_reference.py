"""Write docs/cli.md from the CLI's own help texts (a test keeps the file current).

    python scripts/cli_reference.py > docs/cli.md
"""

from __future__ import annotations

import click

from infersweep.cli import COMMANDS, cli

WIDTH = 100


def _walk(cmd: click.Command, path: list[str], ctx: click.Context):
    yield path, cmd, ctx
    if isinstance(cmd, click.Group):
        for name in cmd.list_commands(ctx):
            sub = cmd.get_command(ctx, name)
            if sub is not None and not sub.hidden:
                yield from _walk(sub, [*path, name], click.Context(
                    sub, info_name=name, parent=ctx, terminal_width=WIDTH,
                    max_content_width=WIDTH))


def render() -> str:
    root = click.Context(cli, info_name="infersweep", terminal_width=WIDTH,
                         help_option_names=["-h", "--help"],
                         max_content_width=WIDTH)
    out = ["# CLI reference", "",
           "Generated from the commands' help by `python scripts/cli_reference.py`; "
           "every command exits 1 on bad input, printing `path:line:col: message (hint)` "
           "lines, and 2 on a usage error.", ""]
    for path, cmd, ctx in _walk(cli, ["infersweep"], root):
        if len(path) > 1 and path[1] not in COMMANDS:
            continue
        out += [f"{'#' * min(len(path) + 1, 4)} `{' '.join(path)}`", "", "```text",
                cmd.get_help(ctx).replace("Usage: infersweep", "Usage: infersweep", 1),
                "```", ""]
    return "\n".join(out)


if __name__ == "__main__":
    print(render(), end="")
