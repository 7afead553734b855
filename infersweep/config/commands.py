"""`infersweep validate`: check the repo's configs (default) or the given files."""

from __future__ import annotations

from pathlib import Path

import click

from infersweep import output
from infersweep.config.catalog import (
    FLEETS_FILE,
    MASTER_GLOB,
    RUNNERS_FILE,
    default_config_files,
    default_runner_file,
    load_catalog,
    load_fleet_sizes,
    load_runners,
)
from infersweep.diagnostics import Diagnostic, InputError
from infersweep.yamldoc import load_yaml

# Files of the repository that are not master configs, and the command that checks each.
OTHER_FILES = {
    "changelog": ("the perf changelog", "`infersweep changelog check --base-ref origin/main` "
                  "checks what a pull request appends to it"),
    "runtimes": ("the runtime pins file", "`infersweep pins check` checks it and that no "
                 "other file names another commit; `infersweep pins verify`, that each commit "
                 "can be fetched"),
    "thresholds": ("the eval thresholds file", "`infersweep eval check --thresholds FILE` "
                   "reads it when it judges an eval"),
    "template": ("an srt-slurm recipe template", "`infersweep recipe check FILE` checks it"),
}


def file_kind(path: Path) -> str:
    """What a file given to `validate` is: master, runners, fleets, or one of OTHER_FILES.
    Decided by content (the name can be anything), by name where the content is unreadable."""
    by_name = {RUNNERS_FILE: "runners", FLEETS_FILE: "fleets", "perf-changelog.yaml":
               "changelog", "runtimes.yaml": "runtimes", "eval-thresholds.yaml": "thresholds",
               "gpu-costs.yaml": "gpu-costs"}
    if path.match(MASTER_GLOB):
        return "master"
    try:
        data = load_yaml(path).data
    except InputError:
        return by_name.get(path.name, "master")  # load_catalog reports why it is unreadable
    if isinstance(data, list) and data and all(isinstance(d, dict) and "config-keys" in d
                                               for d in data):
        return "changelog"
    if isinstance(data, dict):
        keys = set(data)
        if "labels" in keys and keys <= {"labels", "hardware"}:
            return "runners"
        for top, kind in (("fleets", "fleets"), ("runtimes", "runtimes")):
            if keys == {top}:
                return kind
        if keys == {"tiers", "hardware"}:
            return "gpu-costs"
        if keys and keys <= {"default", "models"}:
            return "thresholds"
        if {"resources", "backend"} <= keys:
            return "template"
    return by_name.get(path.name, "master")


def _gpu_costs_problems(paths: list[Path]) -> list[Diagnostic]:
    """The report's GPU costs and power files (configs/gpu-costs.yaml), checked by schema."""
    from infersweep.report import costs as gpucosts

    out: list[Diagnostic] = []
    for p in paths:
        try:
            gpucosts.load(p)
        except InputError as exc:
            out.extend(exc.diagnostics)
    return out


@click.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--runner-config", type=click.Path(path_type=Path), default=None,
              help="Runners file (default: configs/runners.yaml).")
@output.output_format_option
def validate(paths: tuple[Path, ...], runner_config: Path | None) -> None:
    """Validate master configs and the runners file; list every error, exit 1 on any.

    PATHS are master config files; default: configs/*-master.yaml. A runners file given
    as a PATH is used as the runners file, a fleets file is checked too (the fleets file
    beside the runners file always is: it says how many nodes a runner label reaches), and
    so is the report's GPU costs file (configs/gpu-costs.yaml, given or by default).
    Another file of the repository (the changelog, the runtime pins, ...) is not checked
    here: the error names the command that checks it.
    """
    runner_file = runner_config or default_runner_file()
    files, fleets, costs, wrong = [], [], [], []
    for p in paths:
        kind = file_kind(p) if p.is_file() else "master"
        if kind == "runners" and runner_config is None:
            runner_file = p
        elif kind == "fleets":
            fleets.append(p)
        elif kind == "gpu-costs":
            costs.append(p)
        elif kind in OTHER_FILES:
            what, how = OTHER_FILES[kind]
            wrong.append(Diagnostic(str(p), 0, 0, f"this is {what}, not a master config",
                                    how, "file-kind"))
        else:
            files.append(p)
    if wrong:
        raise InputError(wrong)
    if not paths:
        files = default_config_files()
        costs = [p for p in (Path("configs") / "gpu-costs.yaml",) if p.is_file()]
        if not files:
            raise InputError(Diagnostic(
                str(Path.cwd()), 0, 0, "no master configs here (configs/*-master.yaml)",
                "run it in the repository root, or name the files: infersweep validate "
                "FILE... --runner-config RUNNERS_FILE", "io"))
    problems = _gpu_costs_problems(costs)
    for f in fleets:
        try:
            load_fleet_sizes(f)
        except InputError as exc:
            problems.extend(exc.diagnostics)
    if not files and costs and not fleets and paths and runner_config is None:
        if problems:  # only GPU costs files were given
            raise InputError(sorted(set(problems)))
        click.echo("ok: " + ", ".join(f"GPU costs file {c}" for c in costs))
        return
    if not files:  # only a runners and/or fleets file was given
        try:
            runners = load_runners(runner_file)
        except InputError as exc:
            problems.extend(exc.diagnostics)
        if problems:
            raise InputError(sorted(set(problems)))
        click.echo(f"ok: {len(runners.labels)} runner labels ({runner_file})"
                   + "".join(f", fleets file {f}" for f in fleets))
        return
    try:
        catalog = load_catalog(files, runner_file)
    except InputError as exc:
        raise InputError(sorted(set(problems + exc.diagnostics))) from None
    if problems:
        raise InputError(sorted(set(problems)))
    output.warn(catalog.warnings)
    n = len(catalog.entries)
    fleets_note = ""
    if catalog.runners.fleets:
        source = next(iter(catalog.runners.fleets.values())).source
        fleets_note = f", {len(catalog.runners.fleets)} fleets ({source})"
    click.echo(f"ok: {n} config key{'s' if n != 1 else ''} in {len(files) or 0} file(s), "
               f"{len(catalog.runners.labels)} runner labels ({runner_file}){fleets_note}")
