"""``infersweep report build``: the static report from the results store or run folders."""

from __future__ import annotations

import os
from pathlib import Path

import click

from infersweep.evals.thresholds import DEFAULT_PATH
from infersweep.report.fromstore import load_limits
from infersweep.store.commands import db_option


@click.group()
def report():
    """The static HTML report of staged runs (charts, tables, evals, provenance)."""


def _store_runs(url: str | None) -> list:
    from infersweep.store import open_store

    with open_store(url) as store:
        return list(store.staged_runs())


@report.command("build")
@click.option("--out", "-o", type=click.Path(path_type=Path), required=True,
              help="The site folder (replaced whole when the build succeeds; created if new).")
@db_option("With --from-run, the store is read only when --db or $INFERSWEEP_DB_URL is "
           "set.")
@click.option("--from-run", "from_runs", multiple=True, type=click.Path(path_type=Path),
              help="A run to include without a store: a `sweep run` output folder, a "
                   "downloaded results artifact (aggregate/results.json) or an aggregate "
                   "file. Repeatable.")
@click.option("--thresholds", "threshold_file", type=click.Path(dir_okay=False), default=None,
              help=f"Eval thresholds that judge the evals [default: {DEFAULT_PATH} when it "
                   "exists, else evals are shown unjudged].")
@click.option("--title", default="infersweep results", show_default=True,
              help="The site's title.")
@click.option("--costs", "costs_file", type=click.Path(dir_okay=False, path_type=Path),
              default=None,
              help="GPU costs and power for the explorer's cost and energy metrics [default: "
                   "configs/gpu-costs.yaml when it exists].")
def build(out, db, from_runs, threshold_file, title, costs_file):
    """Render the report: an index, a page per config (throughput per GPU against
    interactivity with each run's Pareto frontier, every point, evals against thresholds)
    and a page per staged run at runs/<run id>-<attempt>.html.

    The site works offline (plotly.js is written beside the pages). It is written into a
    temporary folder beside --out and swapped in, so a failed build leaves the old site."""
    from infersweep import report as reportmod
    from infersweep.report import fromrun, output
    from infersweep.store.connect import URL_ENV

    output.check_out(out)  # before any work
    limits = load_limits(threshold_file, warn=lambda w: click.echo(f"warning: {w}", err=True))
    from infersweep.report import costs as gpucosts

    costs = gpucosts.load_default(costs_file)
    runs = [fromrun.load(p) for p in from_runs]
    db = db or os.environ.get(URL_ENV) or None
    if db is not None or not from_runs:
        runs += _store_runs(db)
    summary = reportmod.build(runs, out, thresholds=limits, title=title, costs=costs)
    points = sum(c.points for c in summary.charts)
    click.echo(f"{len(summary.pages)} page(s), {len(summary.charts)} chart(s), {points} "
               f"plotted point(s) from {len(runs)} run(s): {out / 'index.html'}")
    for r in sorted(runs, key=lambda r: (r.run_id, r.attempt)):
        click.echo(f"run {r.label}: {out / reportmod.run_page_path(r)}")
