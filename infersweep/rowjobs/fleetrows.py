"""``infersweep launch``: one matrix row, through srt-slurm at the pinned commit, to a manifest.

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

Steps 2 and 4 are ``infersweep sweep run``'s own code (:class:`infersweep.sweep.run.Sweep`)
with the srt-slurm executor: a launch is a sweep of one row.
"""

from __future__ import annotations

import os
import socket
import time
from dataclasses import dataclass
from pathlib import Path

from infersweep.launch import checkout as checkouts
from infersweep.launch.fleet import Fleet, get_fleet
from infersweep.launch.jobtag import JobTag
from infersweep.launch.local import LocalExecutor
from infersweep.launch.localeval import EvalSim
from infersweep.launch.recipes import check_fits, load_row, render_for_launch
from infersweep.launch.srtslurm import RESULT_DIR, SrtSlurmExecutor
from infersweep.pins.lock import load_lock
from infersweep.pins.verify import resolve_url
from infersweep.recipe import lookup
from infersweep.sweep.run import Sweep
from infersweep.sweep.scale import scale


@dataclass
class Prepared:
    fleet: Fleet
    executor: SrtSlurmExecutor | LocalExecutor
    commit: str
    url: str
    scale_down: float  # --scale-down, else the fleet's

    @property
    def needs_checkout(self) -> bool:
        """Only srt-slurm needs the pinned checkout; a local fleet runs the row itself."""
        return isinstance(self.executor, SrtSlurmExecutor)


class LaunchSweep(Sweep):
    """A sweep whose rows render with the launch's template and must fit its fleet."""

    def __init__(self, *args, fleet: Fleet, template: Path | None,
                 srt_slurm: Path | None = None, **kw):
        self.fleet = fleet
        self.template = template
        self.srt_slurm = srt_slurm  # the pinned checkout, for recipes that live there
        super().__init__(*args, label="launcher", **kw)

    def _render(self, row, workdir, source):
        opts = self.executor.render_options(workdir)
        rendered = render_for_launch(row, self.repo, template_path=self.template, source=source,
                                     client=opts.client, result_dir=opts.result_dir,
                                     srt_slurm=self.srt_slurm)
        check_fits(rendered, row, self.fleet, source)
        return scale(rendered, self.scale_down, client=opts.client, result_dir=opts.result_dir)


def tag_from_env(environ: dict[str, str], context: tuple[str, int]) -> JobTag:
    """The job's tag: the run id and attempt of ``context`` (:func:`run_context`), on this
    runner."""
    run_id, attempt = context
    runner = environ.get("RUNNER_NAME") or socket.gethostname().split(".")[0]
    return JobTag(run_id, attempt, runner)


def retag(prep: Prepared, runner: Sweep, environ: dict[str, str]) -> JobTag:
    """The job tag of ``runner``'s run id and attempt (GitHub's, else lent by a previous
    manifest that matched one of its rows, else a fresh local id), given to the executor."""
    tag = tag_from_env(environ, (runner.run_id, runner.attempt))
    if prep.needs_checkout:
        prep.executor.tag = tag
    return tag


def prepare(*, repo: Path, fleet_name: str | None, fleets: Path, lock_path: Path,
            environ: dict[str, str], tag: JobTag, scale_down: float | None,
            say=print) -> Prepared:
    fleet = get_fleet(fleets, fleet_name, environ.get("RUNNER_NAME"))
    scale_down = fleet.scale_down if scale_down is None else scale_down
    lock = load_lock(lock_path)
    pin = lock.srt_slurm
    url = resolve_url(pin, environ=environ)
    if fleet.executor == "local":
        executor = LocalExecutor(evals=EvalSim(scale_down=scale_down))
    else:
        executor = SrtSlurmExecutor(fleet, None, repo, tag, environ=environ, say=say)
    return Prepared(fleet, executor, pin.commit, url, scale_down)


def ready_checkout(p: Prepared, repo: Path, say=print) -> None:
    """Step 3: the pinned checkout, verified (fetch by SHA, HEAD) and installed, or re-used."""
    t0 = time.monotonic()
    co = checkouts.ensure(p.commit, p.url, p.fleet, repo, say=say)
    p.executor.checkout = co
    say(f"srt-slurm {p.commit[:12]}: {'re-used' if co.warm else 'checked out and installed'} "
        f"{co.root} ({time.monotonic() - t0:.1f} s)")


def recipe_in_checkout(row: dict, repo: Path, template: Path | None) -> bool:
    """Whether the row's recipe can only come from the srt-slurm checkout (no ``--template``
    and :func:`~infersweep.recipe.lookup.needs_checkout`): the checkout is then needed to
    render."""
    return template is None and lookup.needs_checkout(row, repo)


def row_and_source(row_arg: str | None, environ=None) -> tuple[dict, str]:
    return load_row(row_arg, os.environ if environ is None else environ)


__all__ = ["LaunchSweep", "Prepared", "prepare", "ready_checkout", "recipe_in_checkout",
           "tag_from_env", "retag", "row_and_source", "RESULT_DIR"]
