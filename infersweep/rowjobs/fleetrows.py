"""Rows on a fleet: the executor a fleet names, and rows rendered and fitted for it.

A fleet (``configs/fleets.yaml``) runs its rows through srt-slurm at the pinned commit or, when
its ``executor`` is ``local``, on the machine itself with the local executor (simulated
engines). Both ``infersweep launch`` (one row) and ``infersweep sweep run --executor
srt-slurm`` (every row of a selection) prepare the fleet here and run its rows with
:class:`FleetRowRunner`, a :class:`~infersweep.rowjobs.runner.RowRunner` whose rows render
with the fleet's template and must fit the fleet.
"""

from __future__ import annotations

import socket
import time
from dataclasses import dataclass
from pathlib import Path

from infersweep.pins.lock import load_lock
from infersweep.pins.verify import resolve_url
from infersweep.recipe import lookup
from infersweep.rowjobs import checkout as checkouts
from infersweep.rowjobs.fleet import Fleet, get_fleet
from infersweep.rowjobs.jobtag import JobTag
from infersweep.rowjobs.local import LocalExecutor
from infersweep.rowjobs.localeval import EvalSim
from infersweep.rowjobs.recipes import check_fits, render_for_launch
from infersweep.rowjobs.runner import RowRunner
from infersweep.rowjobs.scale import scale
from infersweep.rowjobs.srtslurm import SrtSlurmExecutor


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


class FleetRowRunner(RowRunner):
    """Rows that render with the fleet's template and must fit the fleet."""

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


def retag(prep: Prepared, runner: RowRunner, environ: dict[str, str]) -> JobTag:
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
    """The pinned checkout, verified (fetch by SHA, HEAD) and installed, or re-used."""
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

