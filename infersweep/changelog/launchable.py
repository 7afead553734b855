"""Which rows of a sweep the benchmark jobs can launch, and how long each job may take.

The setup job decides this on a CPU, before any runner is taken: every row is rendered as
``infersweep launch`` will render it. A row that cannot be rendered (a row with no recipe
template yet, an eval row with no throughput row to run after) is not fanned out to a
launcher that would refuse it: it is named in an annotation and in the rows file's
``not-run`` list, so the gate still counts its points as missing, and no other job is
skipped because of it.

Agentic-coding rows (``scenario-type: agentic-coding``, in any single- or multi-node job
output) are held back before any rendering, by rule (:data:`AGENTIC`): no launcher runs them
yet. They go to ``not-run`` like any refused row, but a sweep announces them together, once:
:func:`agentic_notice` (one annotation: how many rows, which configs) and
:func:`agentic_summary` (a section of the step summary), instead of one warning per row.

A launched row's ``timeout-minutes`` comes from the same numbers as the launcher's own
deadline (:mod:`infersweep.launch.deadline`), for every fleet whose runners carry its label.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from infersweep.changelog.buckets import recipe_fingerprint
from infersweep.config.catalog import default_runner_file, load_runners
from infersweep.diagnostics import Diagnostic, InputError
from infersweep.launch.deadline import job_timeout_minutes
from infersweep.launch.fleet import FLEETS_PATH, Fleet, fleet_name, load_fleets
from infersweep.recipe.render import render_row

EVAL_ALONE = ("an eval with no throughput row in this sweep to run after cannot be launched "
              "on its own yet")
AGENTIC = "agentic-coding rows are not runnable yet"
AGENTIC_RULE = "agentic-not-runnable"  # the rule of the setup job's one notice about them
AGENTIC_TITLE = "agentic-coding rows not run"  # that notice's title


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
            if is_agentic(row):  # first: an agentic eval row is agentic before it is an eval
                out.refused.append((name, row, AGENTIC))
                continue
            if row.get("eval-only"):
                out.refused.append((name, row, EVAL_ALONE))
                continue
            try:
                recipe = render_row(row, repo, source="<row>", srt_slurm=srt_slurm).recipe
            except InputError as exc:
                out.refused.append((name, row, "; ".join(d.message
                                                         for d in exc.diagnostics[:3])))
                continue
            out.rows[name].append(row)
            out.timeouts[recipe_fingerprint(row)] = job_timeout_minutes(
                recipe, by_label.get(row["runner"], []))
    return out


def agentic_and_others(refused: list[tuple[str, dict, str]]) -> tuple[list, list]:
    """(agentic rows held back by rule, every other refused row), each (output, row, why)."""
    agentic = [r for r in refused if r[2] == AGENTIC]
    return agentic, [r for r in refused if r[2] != AGENTIC]


def _config(row: dict) -> str:
    return str(row.get("config-key") or row.get("exp-name") or "?")


def _points(row: dict) -> int:
    """The throughput points the gate expects of a row (an eval row has none)."""
    if row.get("eval-only"):
        return 0
    conc = row.get("conc")
    return len(conc) if isinstance(conc, list) else int(conc is not None)


def _by_config(rows: list[dict]) -> dict[str, list[dict]]:
    found: dict[str, list[dict]] = {}
    for row in rows:
        found.setdefault(_config(row), []).append(row)
    return dict(sorted(found.items()))


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def agentic_notice(agentic: list[tuple[str, dict, str]]) -> Diagnostic | None:
    """The one notice a sweep gives about its agentic rows (None when it has none): how many
    rows and which configs, that no job runs them and that the gate counts them missing."""
    if not agentic:
        return None
    configs = _by_config([row for _, row, _ in agentic])
    named = ", ".join(f"{key} ({_plural(len(rows), 'row')})" for key, rows in configs.items())
    return Diagnostic("<sweep>", 0, 0,
                      f"{AGENTIC}: {_plural(len(agentic), 'row')} of "
                      f"{_plural(len(configs), 'config')} not run: {named}",
                      "no benchmark job is started for them; they are listed under not-run in "
                      "sweep-rows and the gate counts their points as missing", AGENTIC_RULE)


def agentic_summary(agentic: list[tuple[str, dict, str]]) -> str:
    """The step-summary section about a sweep's agentic rows (config, job output, rows,
    points); empty when there are none."""
    from tabulate import tabulate

    if not agentic:
        return ""
    groups: dict[tuple[str, str], list[dict]] = {}
    for name, row, _ in agentic:
        groups.setdefault((_config(row), name), []).append(row)
    table = [[key, name, len(rows), sum(_points(r) for r in rows)]
             for (key, name), rows in sorted(groups.items())]
    return (f"### Agentic-coding rows not run\n\n{AGENTIC}: no benchmark job is started "
            f"for these {_plural(len(agentic), 'row')}; the other rows of their shards run. "
            "They are listed under `not-run` in `sweep-rows`, and the gate counts their points "
            "as missing.\n\n" + tabulate(table, headers=["config", "job", "rows", "points"],
                                          tablefmt="github"))
