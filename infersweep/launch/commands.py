"""`infersweep launch`: one matrix row, through srt-slurm at the pinned commit, to a manifest.

The order matters: everything that needs only a CPU comes before anything is allocated.

1. the row (``--row`` or ``$INFERSWEEP_ROW``), the fleet (``configs/fleets.yaml``), the pin
   (``configs/runtimes.yaml``), the run's tag (``GITHUB_RUN_ID``, ``GITHUB_RUN_ATTEMPT``,
   ``RUNNER_NAME``);
2. the recipe rendered and checked against the fleet (and the previous manifest, if any);
3. the srt-slurm checkout: fetched by SHA into the cache (which verifies the pin) or re-used;
4. the job: ``srtctl apply --json``, watched to its end or the deadline, cancelled by id on
   SIGTERM/SIGINT, always collected into the manifest.

A fleet whose ``executor`` is ``local`` skips step 3 and runs step 4 on the runner itself
with the local executor (simulated engines): the same launcher, workflows and manifests on
a machine without Slurm or GPUs.

Steps 2 and 4 are the rows' runner that ``infersweep sweep run`` uses too
(:class:`infersweep.rowjobs.fleetrows.FleetRowRunner`): a launch is a run of one row.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import click

from infersweep.clitypes import FiniteFloat, positive_float


@click.command("launch")
@click.option("--row", "row_arg", default=None, metavar="FILE|-|JSON",
              help="The matrix row: a file, '-' for stdin, or the JSON [default: "
                   "$INFERSWEEP_ROW].")
@click.option("--fleet", default=None,
              help="Fleet in the fleets file [default: the runner name's prefix, "
                   "$RUNNER_NAME up to '_'].")
@click.option("--fleets", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Fleets file [default: configs/fleets.yaml in --repo].")
@click.option("--lock", "lock_path", type=click.Path(dir_okay=False, path_type=Path),
              default=None, help="Pins file [default: configs/runtimes.yaml in --repo].")
@click.option("--template", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Render the row with this template instead of its CONFIG_FILE (e.g. an "
                   "upstream backend where the pinned srt-slurm has no ATOM).")
@click.option("--output", type=click.Path(path_type=Path), default=None,
              help="Results folder, new or empty [default: $INFERSWEEP_RESULT_DIR, else "
                   "results/launch-<UTC time>].")
@click.option("--previous-manifest", "previous", multiple=True, type=click.Path(path_type=Path),
              help="The previous attempt's manifest (or output folder): run only the points "
                   "it lacks.")
@click.option("--timeout", type=positive_float(), default=None,
              help="Seconds to wait for the job before cancelling it [default: the recipe's "
                   "time limit plus the fleet's deadline-margin-s].")
@click.option("--scale-down", type=FiniteFloat(min=1), default=None,
              help="Divide ISL, OSL, prompt and warm-up counts by this factor [default: the "
                   "fleet's scale-down, 1 unless it sets one].")
@click.option("--config-key", default=None,
              help="The catalog entry the row belongs to, which its results are recorded "
                   "under [default: the row's config-key, else the one catalog entry with the "
                   "row's recipe].")
@click.option("--repo", type=click.Path(file_okay=False, path_type=Path), default=Path("."),
              show_default=True, help="Repository root (templates, configs/).")
def launch(row_arg, fleet, fleets, lock_path, template, output, previous, timeout, scale_down,
           config_key, repo):
    """Run one row: verify the pin, check srt-slurm out (cached), render, `srtctl apply`,
    watch, collect, write the manifest.

    Exits 0 only when the job COMPLETED and every expected point is present (an eval-only
    row, which runs its GSM8K eval alone: the eval); 1 otherwise (bad input, srtctl submitted
    nothing, the job failed or timed out, a point or the eval is missing);
    130/143 after SIGINT/SIGTERM (the job is cancelled by id and collected first).
    """
    from infersweep.launch import agenticinputs, identity
    from infersweep.launch.deadline import launch_deadline_s
    from infersweep.progress import StatusLines
    from infersweep.rowjobs import fleetrows
    from infersweep.rowjobs.apply import SubmitError
    from infersweep.rowjobs.checkout import CheckoutError
    from infersweep.rowjobs.executor import JobState
    from infersweep.rowjobs.manifest import FILENAME
    from infersweep.rowjobs.output import output_dir
    from infersweep.rowjobs.recipes import load_row
    from infersweep.rowjobs.runner import load_previous, run_context
    from infersweep.rowjobs.table import report

    t_start = time.monotonic()
    environ = dict(os.environ)
    repo = repo.resolve()
    fleets = fleets or repo / "configs" / "fleets.yaml"
    lock_path = lock_path or repo / "configs" / "runtimes.yaml"
    row, source = load_row(row_arg, environ)
    key = identity.config_key(row, repo, given=config_key, source=source,
                              warn=lambda line: click.echo(line, err=True))
    prior = load_previous(previous)
    tag = fleetrows.tag_from_env(environ, run_context([]))  # until the rows are matched
    display = StatusLines()
    say = display.line
    prep = fleetrows.prepare(repo=repo, fleet_name=fleet, fleets=fleets, lock_path=lock_path,
                             environ=environ, tag=tag, scale_down=scale_down, say=say)
    template = template or (repo / prep.fleet.template if prep.fleet.template else None)
    if output is None and environ.get("INFERSWEEP_RESULT_DIR"):
        output = Path(environ["INFERSWEEP_RESULT_DIR"])
    out = output_dir(output, time.strftime("launch-%Y%m%dT%H%M%SZ", time.gmtime()))
    if prep.needs_checkout and agenticinputs.is_agentic(row):
        # the client and the traces, before the checkout and before any GPU is allocated
        agenticinputs.ready(row, environ, say=say)
    srt_slurm = None
    if prep.needs_checkout and fleetrows.recipe_in_checkout(row, repo, template):
        # the row's recipe is in srt-slurm at the pinned commit: check it out to render it
        fleetrows.ready_checkout(prep, repo, say=say)
        srt_slurm = prep.executor.checkout.src
    runner = fleetrows.FleetRowRunner([(key, row)], repo=repo, executor=prep.executor,
                                      out_dir=out, scale_down=prep.scale_down, previous=prior,
                                      timeout=None, display=display, fleet=prep.fleet,
                                      template=template, srt_slurm=srt_slurm)
    runner.srt_slurm_commit = prep.commit
    # the run id and attempt: GitHub's, else lent by a previous manifest of this row (one
    # that matches no row lends nothing), else a fresh local id
    tag = fleetrows.retag(prep, runner, environ)
    plan = runner.plans[0]
    runner.timeout = timeout or launch_deadline_s(plan.rendered.recipe, prep.fleet,
                                                  plan.rendered.workload, prep.scale_down)
    work = "the eval alone (eval-only row)" if plan.eval_only else f"{len(plan.run)} point(s)"
    say(f"launch {tag.name}: {key} {plan.rendered.name}, {work}, fleet "
        f"{prep.fleet.name}, deadline {runner.timeout:g} s, output {out}")
    stopped = None
    try:
        if plan.has_work and prep.needs_checkout and srt_slurm is None:
            fleetrows.ready_checkout(prep, repo, say=say)
            say(f"ready to submit {time.monotonic() - t_start:.2f} s after start")
        found, stopped = runner.run()
    except (SubmitError, CheckoutError) as exc:  # nothing runs: say why in the manifest
        found = [runner._finish(plan, runner._not_run(plan, JobState.FAILED,
                                                      exc.diagnostics[0].message))]
        say(f"error: {exc.diagnostics[0]}")
    finally:
        display.close()
    issues = report(found, out, title=f"Launch {tag.name}")
    click.echo(f"manifest: {plan.workdir / FILENAME}", err=True)
    if stopped is not None:
        click.echo(f"stopped by {signal.Signals(stopped).name}", err=True)
        sys.exit(128 + stopped)
    if issues:
        sys.exit(1)
