"""`infersweep results`: process, collect, check and compare a run's benchmark results."""

from __future__ import annotations

import json
import math
from pathlib import Path

import click

from infersweep import ghactions, output
from infersweep.atomic import check_writable, write_atomic
from infersweep.diagnostics import Diagnostic, InputError


@click.group()
def results():
    """Turn a finished run into rows, one aggregate, a staging verdict and a comparison."""


def _warn(warnings) -> None:
    for w in warnings:
        click.echo(f"warning: {w}", err=True)


@results.command()
@click.argument("sources", nargs=-1, required=True)
@click.option("--output", "-o", type=click.Path(path_type=Path), default=None,
              help="Folder for the rows (<config key>/<recipe>-c<conc>-a<attempt>.row.json); "
                   "default: JSON lines on stdout.")
@click.option("--allow-incomplete", is_flag=True,
              help="Keep a point with completed < requested or failed requests as a row "
                   "with successful=false instead of refusing it.")
def process(sources, output, allow_incomplete):
    """Each point of the manifests becomes one normalised row (InferenceX field names).

    A point without a result file is skipped with a warning; bad input (a result file that
    is gone, NaN, a negative count, the wrong concurrency, a short point) is an error and
    nothing is written.

    SOURCES are `sweep run` output folders, manifest.json files, processed *.row.json
    files or aggregates (folders are searched recursively).
    """
    from infersweep.results import collect as collecting
    from infersweep.results.process import row_file_name

    if output is not None:
        check_writable(output / "probe", "--output")
    g = collecting.gather(sources, allow_incomplete=allow_incomplete)
    _warn(g.warnings)
    collecting.raise_errors(g)
    rows = sorted(g.rows, key=collecting.sort_key)
    if output is None:
        for r in rows:
            click.echo(json.dumps(r))
    else:
        for r in rows:
            write_atomic(output / r["config_key"] / row_file_name(r),
                         json.dumps(r, indent=1) + "\n", "a processed row")
        click.echo(f"{len(rows)} row(s) written to {output}", err=True)


@results.command()
@click.argument("sources", nargs=-1, required=True)
@click.option("--output", "-o", type=click.Path(path_type=Path), required=True,
              help="The aggregate JSON.")
@click.option("--csv", "csv_path", type=click.Path(path_type=Path), default=None,
              help="The CSV for people (default: the aggregate's name with .csv).")
@click.option("--allow-empty", is_flag=True,
              help="A source folder that is missing or holds no results is no error (the "
                   "run's collect job: `results check --matrix` then names what is missing).")
def collect(sources, output, csv_path, allow_empty):
    """Every row of a run in one aggregate, sorted, one row per point across reruns.

    Of several rows of one point the newest successful attempt wins (with none successful,
    the newest); the winner lists the rows it replaced.

    SOURCES are `sweep run` output folders, manifest.json files, processed *.row.json
    files or aggregates (folders are searched recursively).
    """
    from infersweep.results import collect as collecting

    csv_path = csv_path or output.with_suffix(".csv")
    check_writable(output, "--output")
    check_writable(csv_path, "--csv")
    g = collecting.gather(sources, allow_incomplete=True, allow_empty=allow_empty)
    _warn(g.warnings)
    collecting.raise_errors(g)
    agg = collecting.aggregate(g)
    write_atomic(output, collecting.to_json(agg), "the aggregate")
    write_atomic(csv_path, collecting.to_csv(agg), "the CSV")
    click.echo(f"{len(agg['rows'])} point(s), {len(agg['missing'])} missing: {output}, "
               f"{csv_path}", err=True)


@results.command()
@click.argument("sources", nargs=-1, required=True)
@click.option("--matrix", "matrix_file", type=click.Path(path_type=Path), default=None,
              help="The matrix the run was asked for (`infersweep matrix` output, or a rows "
                   "file); without it, each manifest's row.json says what was expected.")
@click.option("--srt-slurm-commit", default=None,
              help="The srt-slurm commit every row must name (default: the pin in "
                   "--repo's configs/runtimes.yaml when there is one, else they must agree).")
@click.option("--repo", type=click.Path(file_okay=False, path_type=Path), default=Path("."),
              show_default=True, help="Checkout whose runtimes lock names the srt-slurm commit.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True, help="The report on stdout.")
@output.output_format_option
@click.option("--step-summary", envvar="GITHUB_STEP_SUMMARY", default=None,
              help="Append a markdown report here (default: $GITHUB_STEP_SUMMARY).")
def check(sources, matrix_file, srt_slurm_commit, repo, fmt, step_summary):
    """The staging gate: exactly the expected points, each complete, the expected identities.

    Expected points are those of the matrix rows (row.json) beside each manifest. Names
    every missing, short, failed or unexpected point; exit 1 on any.

    SOURCES are `sweep run` output folders, manifest.json files, processed *.row.json
    files or aggregates (folders are searched recursively).
    """
    from infersweep.results import check as checking
    from infersweep.results import collect as collecting

    ghactions.check_targets({"--step-summary": step_summary})
    matrix_rows = _matrix_rows(matrix_file) if matrix_file is not None else None
    srt_slurm_commit = srt_slurm_commit or _pinned_srt_slurm(repo)
    # with the matrix as the authority, a run that produced nothing is every point missing
    g = collecting.gather(sources, allow_incomplete=True, allow_empty=matrix_rows is not None)
    _warn(g.warnings)
    agg = collecting.aggregate(g)
    problems, counts = checking.check(agg, srt_slurm_commit=srt_slurm_commit, errors=g.errors,
                                      matrix_rows=matrix_rows)
    if output.selected() == output.GITHUB and problems:
        click.echo(checking.github_annotations(problems))
    if fmt == "json":
        click.echo(json.dumps(checking.as_json(problems, counts), indent=2))
    else:
        click.echo(checking.text_report(problems, counts))
    ghactions.append(step_summary, checking.markdown_summary(problems, counts), "--step-summary")
    if problems:
        raise SystemExit(1)


def _pinned_srt_slurm(repo: Path) -> str | None:
    from infersweep.pins.lock import LOCK_PATH, SRT_SLURM, load_lock

    path = repo / LOCK_PATH
    if not path.is_file():
        return None
    lock = load_lock(path)
    return lock.srt_slurm.commit if SRT_SLURM in lock.pins else None


def _matrix_rows(path: Path) -> list[dict]:
    """Rows from `infersweep matrix` output (a list) or a rows file (``{"rows": {id: row}}``,
    with the rows it could not launch under ``not-run``)."""
    from infersweep.changelog.shards import NOT_RUN
    from infersweep.results.sources import load_json

    if not path.is_file():
        raise InputError(Diagnostic(str(path), 0, 0, "no such matrix file",
                                    "pass the JSON `infersweep matrix` printed", "matrix"))
    data = load_json(path, "matrix")
    rows = data.get("rows") if isinstance(data, dict) else data
    if isinstance(rows, dict):
        rows = list(rows.values())
        # rows the sweep asked for that no job could launch: still expected, so missing; an
        # entry that is not {"row": ..., "reason": ...} fails the check below like a bad row
        not_run = data.get(NOT_RUN) or {}
        entries = list(not_run.values()) if isinstance(not_run, dict) else [not_run]
        rows += [e.get("row") if isinstance(e, dict) else e for e in entries]
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise InputError(Diagnostic(str(path), 0, 0, "not a matrix: expected a list of rows or "
                                    '{"rows": {...}}', "pass the JSON `infersweep matrix` "
                                    "printed", "matrix"))
    return rows


class Threshold(click.ParamType):
    """``metric=percent`` with a known metric and a finite non-negative percent."""
    name = "METRIC=PERCENT"

    def convert(self, value, param, ctx):
        from infersweep.results.compare import METRICS

        if isinstance(value, tuple):
            return value
        metric, sep, pct = str(value).partition("=")
        if not sep or metric not in METRICS:
            self.fail(f"{value!r} is not METRIC=PERCENT with METRIC one of "
                      f"{', '.join(METRICS)}", param, ctx)
        try:
            number = float(pct)
        except ValueError:
            self.fail(f"{pct!r} is not a number", param, ctx)
        if not math.isfinite(number) or number < 0:
            self.fail(f"{pct!r} is not in the range x>=0", param, ctx)
        return metric, number


def _aggregate_of(path: str) -> dict:
    from infersweep.results import collect as collecting

    g = collecting.gather([path], allow_incomplete=True)
    collecting.raise_errors(g)
    agg = collecting.aggregate(g)
    if not agg["rows"]:
        raise InputError(Diagnostic(path, 0, 0, "no rows to compare",
                                    "pass an aggregate or a run with results", "results-input"))
    return agg


@results.command()
@click.argument("base")
@click.argument("new")
@click.option("--metric", "metrics", multiple=True,
              type=click.Choice(["tput_per_gpu", "output_tput_per_gpu", "median_intvty",
                                 "p99_intvty", "median_ttft", "p99_ttft"]),
              help="Metrics to compare (repeatable; default: tput_per_gpu, median_intvty, "
                   "median_ttft).")
@click.option("--threshold", "thresholds", multiple=True, type=Threshold(),
              help="Regression threshold of one metric in percent, e.g. tput_per_gpu=3 "
                   "(repeatable; defaults: 5 for throughput and p50 interactivity, 10 for p99 "
                   "interactivity and p50 TTFT, 20 for p99 TTFT).")
@click.option("--fail-on-regression", is_flag=True, help="Exit 1 when any metric regressed.")
@click.option("--output", "-o", type=click.Path(path_type=Path), default=None,
              help="Also write the markdown table here.")
def compare(base, new, metrics, thresholds, fail_on_regression, output):
    """The change per matching point from BASE to NEW, as a markdown table.

    BASE and NEW are aggregates (or anything `results collect` reads). Points match on
    config key, topology, ISL/OSL, scale-down and concurrency."""
    from infersweep.results import compare as comparing

    if output is not None:
        check_writable(output, "--output")
    metrics = tuple(metrics) or comparing.DEFAULT_METRICS
    limits = {m: d for m, (_, _, d) in comparing.METRICS.items()}
    limits.update(dict(thresholds))
    changes, only_base, only_new = comparing.compare(_aggregate_of(base), _aggregate_of(new),
                                                     metrics)
    text, regressions = comparing.markdown(changes, only_base, only_new, limits, metrics)
    click.echo(text, nl=False)
    if output is not None:
        write_atomic(output, text, "the comparison")
    if regressions and fail_on_regression:
        raise SystemExit(1)
