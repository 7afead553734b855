"""`infersweep store`: create, fill and list the results store, with or without GitHub."""

from __future__ import annotations

import json

import click

from infersweep import ghactions
from infersweep.clitypes import POSITIVE_INT
from infersweep.evals.thresholds import DEFAULT_PATH as THRESHOLDS

DB_HELP = ("The store: a SQLite file path, sqlite:///PATH or postgresql+psycopg://USER:PASSWORD@"
           "HOST:PORT/DB [default: $INFERSWEEP_DB_URL, else results/infersweep.db].")


def db_option(note: str = "", dest: str = "db"):
    """``--db URL``, the results store, as every command that reads or writes it spells it
    (``note``: what the option does in that command, appended to the help)."""
    return click.option("--db", dest, default=None, metavar="URL",
                        help=DB_HELP + (f" {note}" if note else ""))


@click.group()
def store():
    """The results store: staged runs, their points and evals (SQLite or PostgreSQL)."""


@store.command()
@db_option()
def migrate(db):
    """Create the store's tables, or bring them to this version's schema."""
    from infersweep.store import open_store

    with open_store(db) as s:
        before = s.revision
        after = s.migrate()
        shown = s.target.shown
    if before == after:
        click.echo(f"store {shown}: schema at revision {after}, nothing to do")
    else:
        click.echo(f"store {shown}: schema migrated from {before or 'nothing'} to revision "
                   f"{after}")


def _summary_markdown(shown: str, s, layout: str, source: str) -> str:
    lines = [f"### Staged run {s.run_id} (attempt {s.attempt})", "",
             f"Into the results store `{shown}` from a {layout} folder ({source}).", "",
             "| | inserted | updated | removed |", "|---|---:|---:|---:|",
             f"| points | {s.points_inserted} | {s.points_updated} | {s.points_removed} |",
             f"| evals | {s.evals_inserted} | {s.evals_updated} | {s.evals_removed} |"]
    if s.agentic_inserted or s.agentic_updated or s.agentic_removed:
        lines.append(f"| agentic results | {s.agentic_inserted} | {s.agentic_updated} | "
                     f"{s.agentic_removed} |")
    lines.append("")
    if s.configs:
        lines += ["Configs: " + ", ".join(f"`{c}`" for c in s.configs), ""]
    return "\n".join(lines)


@store.command()
@click.argument("folder", type=click.Path(file_okay=False))
@db_option()
@click.option("--run-id", default=None,
              help="The run's id [default: the run id in the manifests' provenance].")
@click.option("--attempt", type=POSITIVE_INT, default=None,
              help="The run's attempt [default: the newest attempt among its rows].")
@click.option("--step-summary", envvar="GITHUB_STEP_SUMMARY", default=None,
              help="Append a markdown summary here (default: $GITHUB_STEP_SUMMARY).")
@click.option("--thresholds", "thresholds_file", type=click.Path(dir_okay=False),
              default=THRESHOLDS, show_default=True,
              help="The eval thresholds and pinned test splits every eval is judged by.")
@click.option("--dataset", type=click.Path(dir_okay=False), envvar="INFERSWEEP_EVAL_DATASET",
              default=None,
              help="The GSM8K test split the evals ran on, as for `eval check` "
                   "[env INFERSWEEP_EVAL_DATASET].")
def ingest(folder, db, run_id, attempt, step_summary, thresholds_file, dataset):
    """Stage the run in FOLDER: its points, evals and changelog metadata, in one transaction.

    FOLDER is a `sweep run` output folder or a run's downloaded artifacts (results_bmk with
    its job folders and aggregate/results.json, changelog-metadata). Rows are checked against
    their schema first, and every eval folder by `eval check` for the row of its job, as
    /stage-results judges it; on any error nothing is written. Staging the same run id and
    attempt again updates its rows in place and leaves other runs untouched.
    """
    from infersweep.store import open_store
    from infersweep.store.ingest import ingest_folder

    ghactions.check_targets({"--step-summary": step_summary})
    click.echo(f"reading {folder}", err=True)
    with open_store(db) as s:
        staged = ingest_folder(s, folder, run_id=run_id, attempt=attempt,
                              thresholds_file=thresholds_file, dataset=dataset,
                              echo=lambda line: click.echo(line, err=True))
    if staged.created:
        click.echo(f"store {staged.store}: new, schema created at revision {staged.created}",
                   err=True)
    summary = staged.summary
    click.echo(f"staged {summary.line} into {staged.store}")
    ghactions.append(step_summary, _summary_markdown(staged.store, summary, staged.layout,
                                                     staged.source) + "\n",
                     "--step-summary")


@store.command("list")
@db_option()
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True)
@click.option("--agentic", "agentic", is_flag=True,
              help="List the agentic results instead: one line per point with its headline "
                   "numbers, KV-offload mode and whether it is publishable.")
def list_runs(db, fmt, agentic):
    """The staged runs, oldest staging first, with their point, agentic result and eval
    counts (agentic results that are not publishable, such as scaled-down local runs, are
    counted apart)."""
    from tabulate import tabulate

    from infersweep.printable import printable_cells
    from infersweep.store import open_store

    if agentic:
        _list_agentic(db, fmt)
        return
    with open_store(db) as s:
        runs = s.overview()
    if fmt == "json":
        click.echo(json.dumps(runs, indent=2))
        return
    if not runs:
        click.echo("no staged runs")
        return
    click.echo(tabulate(printable_cells(
                        [[r["run_id"], r["attempt"], r["source"], r["pr_number"] or "",
                          r["staged_at"], r["points"], _agentic_cell(r), r["evals"],
                          ", ".join(r["configs"])]
                         for r in runs]),
                        headers=["run", "attempt", "source", "PR", "staged", "points",
                                 "agentic", "evals", "configs"]))


def _agentic_cell(r: dict) -> str:
    """Agentic results, with how many are local runs that are never published."""
    n, local = r["agentic"], r["agentic_not_publishable"]
    return f"{n} ({local} local, not publishable)" if local else str(n)


def _pct(v) -> str:
    return "" if v is None else f"{v * 100:.1f}%"


def _list_agentic(db, fmt) -> None:
    from tabulate import tabulate

    from infersweep.printable import printable_cells
    from infersweep.store import open_store

    with open_store(db) as s:
        found = s.agentic_points()
    if fmt == "json":
        click.echo(json.dumps(found, indent=2))
        return
    if not found:
        click.echo("no staged agentic results")
        return
    def num(v, fmt="{:,.1f}", scale=1.0):
        return "" if v is None else fmt.format(v * scale)
    click.echo(tabulate(printable_cells(
        [[r["run_id"], r["attempt"], r["config_key"],
          r["kv_offloading"] + (f"/{r['kv_offload_backend']}" if r["kv_offload_backend"]
                                else ""), r["conc"], num(r["tput_per_gpu"]),
          num(r["median_intvty"], "{:,.2f}"), num(r["median_ttft"], "{:,.0f}", 1000),
          _pct(r["server_gpu_cache_hit_rate"]), _pct(r["server_cpu_cache_hit_rate"]),
          _pct(r["theoretical_cache_hit_rate"]), _pct(r["error_rate"]),
          r["num_requests_successful"],
          "yes" if r["publishable"] else ("no (local, scaled down)" if r["scaled"] else "no")]
         for r in found]),
        headers=["run", "attempt", "config", "KV offload", "conc", "tok/s/GPU",
                 "tok/s/user p50", "TTFT p50 ms", "GPU hit", "CPU hit", "theoretical hit",
                 "errors", "requests", "publishable"]))
