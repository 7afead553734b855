"""`infersweep sweep run`: the matrix rows of a selection, each run on an executor."""

from __future__ import annotations

import json
import signal
import sys
import time
from pathlib import Path

import click

from infersweep import ghactions
from infersweep.clitypes import FiniteFloat, fraction, positive_float
from infersweep.diagnostics import Diagnostic, InputError
from infersweep.matrix.commands import (
    catalog_from_options,
    config_key_options,
    selection_options,
    test_config_selection,
)
from infersweep.matrix.generate import generate_keyed
from infersweep.store.commands import db_option

EXECUTORS = ("local", "srt-slurm")


def _executor(name: str, evals, agentic=None):
    from infersweep.rowjobs.local import LocalExecutor

    return {"local": LocalExecutor}[name](evals=evals, agentic=agentic)


def _srt_slurm_sweep(pairs, repo, fleet, out, scale_down, prior, timeout, display):
    """The fleet's runner (fleet fit, template, pinned checkout) over every row."""
    import os

    from infersweep.rowjobs import fleetrows
    from infersweep.rowjobs.runner import run_context

    repo = Path(repo).resolve()
    environ = dict(os.environ)
    tag = fleetrows.tag_from_env(environ, run_context([]))  # until the rows are matched
    prep = fleetrows.prepare(repo=repo, fleet_name=fleet,
                             fleets=repo / "configs" / "fleets.yaml",
                             lock_path=repo / "configs" / "runtimes.yaml", environ=environ,
                             tag=tag, scale_down=scale_down, say=display.line)
    template = repo / prep.fleet.template if prep.fleet.template else None
    runner = fleetrows.FleetRowRunner(pairs, repo=repo, executor=prep.executor, out_dir=out,
                                      scale_down=scale_down, previous=prior, timeout=timeout,
                                      display=display, fleet=prep.fleet, template=template)
    runner.label = "sweep"
    runner.srt_slurm_commit = prep.commit
    fleetrows.retag(prep, runner, environ)
    if prep.needs_checkout and any(p.has_work for p in runner.plans):
        fleetrows.ready_checkout(prep, repo, say=display.line)
    return runner


@click.group()
def sweep():
    """Run matrix rows end to end: recipe, job, results, manifest."""


@sweep.command("run")
@selection_options
@config_key_options
@click.option("--executor", type=click.Choice(EXECUTORS), default="local", show_default=True,
              help="Where jobs run: local = the simulator on this machine; srt-slurm = "
                   "`srtctl apply` on the --fleet's Slurm (as `infersweep launch` does).")
@click.option("--fleet", default=None,
              help="srt-slurm: the fleet in configs/fleets.yaml [default: $RUNNER_NAME's "
                   "prefix].")
@click.option("--scale-down", type=FiniteFloat(min=1), default=1.0, show_default=True,
              help="Divide ISL, OSL, prompt and warm-up counts by this factor (concurrencies "
                   "stay; each point keeps at least conc prompts).")
@click.option("--output", type=click.Path(file_okay=True, path_type=Path), default=None,
              help="Results folder, new or empty [default: results/sweep-<UTC time>].")
@click.option("--previous-manifest", "previous", multiple=True,
              type=click.Path(path_type=Path),
              help="A manifest (or an earlier output folder) of a previous attempt: run only "
                   "the points it lacks. Repeatable.")
@click.option("--timeout", type=positive_float(), default=None,
              help="Cancel each row's job after this many seconds (the recipe's Slurm time "
                   "limit applies in any case).")
@click.option("--repo", type=click.Path(file_okay=False, path_type=Path), default=Path("."),
              show_default=True, help="Repository root (templates, configs/runtimes.yaml).")
@click.option("--eval-accuracy", type=fraction(), default=0.96, show_default=True,
              envvar="INFERSWEEP_EVAL_ACCURACY",
              help="local: the share of GSM8K questions the simulator answers right "
                   "[env INFERSWEEP_EVAL_ACCURACY].")
@click.option("--eval-stall-rate", type=fraction(), default=0.0, show_default=True,
              envvar="INFERSWEEP_EVAL_STALL_RATE",
              help="local: the share of eval answers whose stream stalls (retried by the "
                   "eval client) [env INFERSWEEP_EVAL_STALL_RATE].")
@click.option("--eval-data", type=click.Path(file_okay=False, exists=True, path_type=Path),
              default=None,
              help="local: a folder with GSM8K's test.jsonl (also the simulator's answer key) "
                   "and train.jsonl [default: a small set written into each job folder].")
@click.option("--traces", type=click.Path(file_okay=False, exists=True, path_type=Path),
              default=None,
              help="local: agentic-coding rows replay this folder of Weka traces [default: a "
                   "seeded synthetic corpus, `agentic traces generate`'s defaults].")
@click.option("--stage", is_flag=True,
              help="When the run is stageable, stage it into the results store (as `store "
                   "ingest` does) and rebuild the report from the store (as `report build` "
                   "does).")
@db_option("Used with --stage.")
@click.option("--site", type=click.Path(path_type=Path), default=Path("results", "site"),
              show_default=True, help="With --stage: the report's folder.")
def run_cmd(config_files, runner_config, executor, fleet, scale_down, output, previous, timeout,
            repo, eval_accuracy, eval_stall_rate, eval_data, traces, stage, db, site,
            **selection):
    """Expand the matrix like `matrix test-config`, run every row, print every point.

    An eval-only row (--evals-only, --all-evals) runs its GSM8K eval alone, with no points.
    Ends with `results check` and, for rows marked run-eval, `eval check` on the output, and
    one line saying whether the run is stageable; with --stage a stageable run is then
    staged into the results store and the report rebuilt. Exits 0 only when every job completed,
    every expected point is present with completed == requested and every eval passes; 1
    otherwise; 130/143 when stopped by SIGINT/SIGTERM (the running
    job is cancelled and collected first).
    """
    from infersweep.atomic import write_atomic
    from infersweep.changelog.local import local_metadata
    from infersweep.evals import check as evalcheck
    from infersweep.progress import StatusLines
    from infersweep.recipe.grouping import grouped_pairs
    from infersweep.results import check as checking
    from infersweep.rowjobs.output import output_dir
    from infersweep.rowjobs.runner import RowRunner, load_previous
    from infersweep.rowjobs.table import report
    from infersweep.store.rundir import CHANGELOG as CHANGELOG_METADATA
    from infersweep.sweep.gate import judge

    if stage:
        from infersweep.report.output import check_out

        check_out(site)  # before hours of work, not after
    catalog = catalog_from_options(config_files, runner_config)
    pairs = generate_keyed(catalog, test_config_selection(**selection))
    pairs = grouped_pairs(pairs, repo)  # one job (one engine start) per server
    if not pairs:
        raise InputError(Diagnostic(" ".join(selection["config_keys"]), 0, 0,
                                    "the selection produced no rows",
                                    "check the keys and filters with `infersweep matrix "
                                    "test-config --format table`", "sweep-select"))
    prior = load_previous(previous)
    # what the report's compare view lists between two runs (a bad changelog: before any work)
    changelog = local_metadata(repo, sorted({key for key, _ in pairs}))
    hint = time.strftime("sweep-%Y%m%dT%H%M%SZ", time.gmtime())
    out = output_dir(output, hint)
    display = StatusLines()
    if executor == "srt-slurm":
        runner = _srt_slurm_sweep(pairs, repo, fleet, out, scale_down, prior, timeout, display)
    else:
        from infersweep.rowjobs.localeval import EvalSim

        for name in ("test.jsonl", "train.jsonl") if eval_data is not None else ():
            if not (eval_data / name).is_file():
                raise InputError(Diagnostic(str(eval_data / name), 0, 0,
                                            f"--eval-data has no {name}",
                                            "give a folder with GSM8K's test.jsonl and "
                                            "train.jsonl, or leave --eval-data out",
                                            "sweep-eval-data"))

        evals = EvalSim(accuracy=eval_accuracy, stall_rate=eval_stall_rate, data_dir=eval_data,
                        scale_down=scale_down)
        agentic = None
        if any(r.get("scenario-type") == "agentic-coding" for _, r in pairs):
            from infersweep.rowjobs.localagentic import AgenticLocal

            agentic = AgenticLocal(out / "_agentic", traces=traces)
            agentic.env()  # client, traces and tokenizer ready (or refused) before any job
        runner = RowRunner(pairs, repo=repo, executor=_executor(executor, evals, agentic),
                           out_dir=out, scale_down=scale_down, previous=prior, timeout=timeout,
                           display=display)
    # the runner checked its inputs: the run's first file
    write_atomic(out / CHANGELOG_METADATA, json.dumps(changelog, indent=2) + "\n", "run output")
    display.line(f"sweep {runner.run_id} attempt {runner.attempt}: {len(runner.plans)} row(s), "
                 f"{sum(len(p.expected) for p in runner.plans)} point(s), executor "
                 f"{executor}, scale-down {scale_down:g}, output {out}")
    try:
        found, stopped = runner.run()
    finally:
        display.close()
    issues = report(found, out, title=f"Sweep {runner.run_id} (attempt {runner.attempt})")
    click.echo(f"manifests: {out}/*/*/manifest.json", err=True)
    verdict = judge(out, [(p.workdir, p.row, m) for p, m in zip(runner.plans, found,
                                                                    strict=False)],
                    repo=repo, srt_slurm_commit=runner.srt_slurm_commit)
    for problem in verdict.problems:
        click.echo(f"error: results check: {problem}", err=True)
    for problem in verdict.eval_problems:
        click.echo(f"error: eval check: {problem}", err=True)
    ghactions.add_summary(checking.markdown_summary(verdict.problems, verdict.counts)
                          + (evalcheck.markdown(verdict.evals) if verdict.evals else ""))
    click.echo(verdict.line())
    if stopped is not None:
        click.echo(f"stopped by {signal.Signals(stopped).name}", err=True)
        sys.exit(128 + stopped)
    if issues or not verdict.stageable:
        if stage:
            click.echo("not staged: the run is not stageable", err=True)
        sys.exit(1)
    if stage:
        _stage(out, db, site, repo, runner.run_id, runner.attempt)


def _stage(out: Path, db: str | None, site: Path, repo: Path, run_id: str,
           attempt: int) -> None:
    """The run into the store, then the report of every staged run from the store."""
    from infersweep.report import run_page_path
    from infersweep.report.fromstore import rebuild
    from infersweep.store import open_store
    from infersweep.store.ingest import ingest_folder
    from infersweep.sweep.gate import THRESHOLDS

    with open_store(db) as store:
        # the sweep's own run id: an agentic result names none (its manifest does)
        staged = ingest_folder(store, out, run_id=run_id, attempt=attempt,
                               thresholds_file=repo / THRESHOLDS,
                               echo=lambda line: click.echo(line, err=True))
        click.echo(f"staged {staged.summary.line} into {staged.store}")
        runs, _ = rebuild(store, site, thresholds_file=repo / THRESHOLDS)
    run = next(r for r in runs if (r.run_id, r.attempt) == (staged.summary.run_id,
                                                             staged.summary.attempt))
    click.echo(f"report: {(site / 'index.html').resolve().as_uri()}")
    click.echo(f"this run: {(site / run_page_path(run)).resolve().as_uri()}")
