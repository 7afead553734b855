"""Which rows of a sweep the benchmark jobs can launch, and how long each job may take.

The setup job decides this on a CPU, before any runner is taken: every row is rendered as
``infersweep launch`` will render it. A row that cannot be rendered (a row with no recipe
template yet, an agentic eval-only row) is not fanned out to a launcher that would refuse it:
it is named in an annotation and in the rows file's ``not-run`` list, so the gate still counts
its points as missing, and no other job is skipped because of it. An eval row with no throughput row to run after (``evals-only``,
``all-evals``) is launched on its own: its job starts the row's server and runs the GSM8K
eval alone.

Agentic-coding rows (``scenario-type: agentic-coding``) are rendered like any other and run
in jobs of their own (the ``agentic-N`` and ``multi-agentic-N`` shard jobs,
:data:`infersweep.changelog.shards.TEMPLATES`); one whose recipe renders no agentic replay is
refused (:data:`NO_REPLAY`), as a recipe that would measure something else.

A launched row's ``timeout-minutes`` comes from the same numbers as the launcher's own
deadline (:mod:`infersweep.launch.deadline`), for every fleet whose runners carry its label;
an agentic row's from its duration and points at each fleet's scale-down.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from infersweep.changelog.buckets import recipe_fingerprint
from infersweep.config.catalog import default_runner_file, load_runners
from infersweep.diagnostics import InputError
from infersweep.launch.deadline import job_timeout_minutes
from infersweep.recipe.render import render_row
from infersweep.rowjobs.fleet import FLEETS_PATH, Fleet, fleet_name, load_fleets

NO_REPLAY = ("its recipe renders no agentic replay (a multi-node agentic row needs a "
             "multi-node agentic recipe), so it cannot be launched yet")


def is_agentic(row: dict) -> bool:
    return row.get("scenario-type") == "agentic-coding"


@dataclass
class Launchable:
    rows: dict[str, list[dict]]  # job output -> rows the benchmark jobs launch
    refused: list[tuple[str, dict, str]] = field(default_factory=list)  # (output, row, why)
    timeouts: dict[str, int] = field(default_factory=dict)  # recipe fingerprint -> minutes

    def timeout_of(self, row: dict) -> int:
        """The job's timeout-minutes (a canary split off a row shares the row's recipe)."""
        return self.timeouts[recipe_fingerprint(row)]


def fleets_by_label(repo: Path) -> dict[str, list[Fleet]]:
    """Runner label -> the fleets of the runners carrying it (configs/runners.yaml)."""
    fleets_file, runners_file = repo / FLEETS_PATH, default_runner_file(repo)
    if not fleets_file.is_file() or not runners_file.is_file():
        return {}
    fleets = load_fleets(fleets_file)
    return {label: [fleets[f] for f in sorted({fleet_name(r) for r in runners or []})
                    if f in fleets]
            for label, runners in load_runners(runners_file).labels.items()}


def split(outputs: dict[str, list[dict]], repo: Path,
          srt_slurm: Path | None = None) -> Launchable:
    """The rows of every job output that can launch, and the ones that cannot (with why).
    ``srt_slurm``: the pinned checkout, for rows whose recipe lives there."""
    repo = Path(repo)
    by_label = fleets_by_label(repo)
    out = Launchable({name: [] for name in outputs})
    for name, rows in outputs.items():
        for row in rows:
            try:
                rendered = render_row(row, repo, source="<row>", srt_slurm=srt_slurm)
            except InputError as exc:
                out.refused.append((name, row, "; ".join(d.message
                                                         for d in exc.diagnostics[:3])))
                continue
            if is_agentic(row) and not getattr(rendered.workload, "agentic", False):
                out.refused.append((name, row, NO_REPLAY))
                continue
            out.rows[name].append(row)
            out.timeouts[recipe_fingerprint(row)] = job_timeout_minutes(
                rendered.recipe, by_label.get(row["runner"], []), rendered.workload)
    return out
