"""``infersweep agentic artifacts``: an agentic job's upload pair, split and joined
(:mod:`infersweep.launch.agenticartifacts`)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from infersweep import ghactions
from infersweep.launch import agenticartifacts as arts

KIND_AGENTIC, KIND_FIXED = "agentic", "fixed-seq"
LISTED = 5  # left-out files named one by one


@click.group()
def artifacts():
    """An agentic job's two artifacts (bmk_agentic_<name>, agentic_<name>)."""


@artifacts.command("split")
@click.argument("result_dir", type=click.Path(path_type=Path, file_okay=False))
@click.option("--out", "out", required=True, type=click.Path(path_type=Path, file_okay=False),
              help="Writes OUT/results and OUT/exports (the two artifacts' contents).")
@click.option("--row", "row_arg", default=None, metavar="FILE|-|JSON",
              help="The job's matrix row [default: $INFERSWEEP_ROW].")
def split_cmd(result_dir, out, row_arg):
    """What a benchmark job uploads for its row: for an agentic row, RESULT_DIR split into
    its results (manifest, row, `*.agentic.json`, logs) and the replay's exports (without
    inputs.json and profile_export_raw.jsonl), no file in both; for any other row nothing.
    Sets the step output `kind` (agentic or fixed-seq)."""
    from infersweep.rowjobs.recipes import load_row

    row, _ = load_row(row_arg, dict(os.environ))
    if not arts.is_agentic_row(row):
        click.echo(f"not an agentic row: {RESULT_DIR_NOTE}", err=True)
        ghactions.set_outputs({"kind": KIND_FIXED})
        return
    for sub in ("results", "exports"):
        arts.require_dir(out / sub, f"--out {sub}")
    done = arts.split(result_dir, out / "results", out / "exports")
    click.echo(f"{result_dir}: {done.describe()}", err=True)
    for line in done.left_out[:LISTED]:
        click.echo(f"  left out: {line}", err=True)
    if len(done.left_out) > LISTED:
        click.echo(f"  left out: {len(done.left_out) - LISTED} more", err=True)
    ghactions.set_outputs({"kind": KIND_AGENTIC})


RESULT_DIR_NOTE = "its job folder is uploaded whole as bmk_<row id>_<attempt>"


@artifacts.command("join")
@click.argument("results_root", type=click.Path(path_type=Path, file_okay=False))
@click.argument("exports_root", type=click.Path(path_type=Path, file_okay=False))
@click.option("--out", "out", required=True, type=click.Path(path_type=Path, file_okay=False),
              help="Each job's folder goes to OUT/<name>.")
def join_cmd(results_root, exports_root, out):
    """After a download into one folder per artifact: move every
    RESULTS_ROOT/bmk_agentic_<name> to OUT/<name> and merge EXPORTS_ROOT/agentic_<name> into
    it, so each result sits beside its exports. Exits 1 when a pair cannot be joined (that
    job is left out, and the gate counts its points missing)."""
    done = arts.join(results_root, exports_root, out)
    click.echo(f"{len(done.jobs)} agentic job folder(s) in {out}", err=True)
    for problem in done.problems:
        click.echo(f"error: {problem}", err=True)
    if done.problems:
        sys.exit(1)
