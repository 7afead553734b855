"""`infersweep validate`: check the repo's configs (default) or the given files."""

from __future__ import annotations

from pathlib import Path

import click

from infersweep import output
from infersweep.config.catalog import default_config_files, default_runner_file, load_catalog


@click.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--runner-config", type=click.Path(path_type=Path), default=None,
              help="Runners file (default: configs/runners.yaml).")
@output.output_format_option
def validate(paths: tuple[Path, ...], runner_config: Path | None) -> None:
    """Validate master configs and the runners file; list every error, exit 1 on any.

    PATHS are master config files; default: configs/*-master.yaml. A runners file given
    as a PATH is used as the runners file.
    """
    runner_file = runner_config or default_runner_file()
    files = []
    for p in paths:
        if p.name == "runners.yaml" and runner_config is None:
            runner_file = p
        else:
            files.append(p)
    if not paths:
        files = default_config_files()
    catalog = load_catalog(files, runner_file)
    for w in catalog.warnings:
        click.echo(f"warning: {w}", err=True)
    n = len(catalog.entries)
    click.echo(f"ok: {n} config key{'s' if n != 1 else ''} in {len(files) or 0} file(s), "
               f"{len(catalog.runners.labels)} runner labels ({runner_file})")

