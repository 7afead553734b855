"""`recipe coverage`: does every row of a catalog's scenario (fixed-seq-len, or
agentic-coding) get a recipe, and does srtctl take it?

Each row is rendered as a launch would render it and ends up in one of three places:
rendered (and from which source: the config's own template, the srt-slurm checkout; a later
source such as framework default templates is one more name), refused (with a reason shared
by every row refused the same way, and a detail naming the file or setting), and, with
srtctl, accepted or rejected by its dry run, or not dry-run when srtctl has no backend for
the recipe's dialect.
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from infersweep import progress
from infersweep.diagnostics import InputError
from infersweep.recipe import refusal, rowfit
from infersweep.recipe.lookup import REFUSE
from infersweep.recipe.render import render_row
from infersweep.recipe.rendered import Rendered
from infersweep.recipe.srtctl import Srtctl, Verdict, backend_of, dry_run

FIXED = "fixed-seq-len"
STANDS_IN = "framework-default-for-missing"  # a default in place of a named, missing recipe
ACCEPTED, REJECTED, NOT_RUN = "accepted", "rejected", "not-dry-run"


def source_of(rendered: Rendered) -> str:
    """Where a rendered recipe came from, a default standing in for a missing one apart."""
    return STANDS_IN if rendered.replaces else rendered.source


@dataclass
class Outcome:
    key: str  # the catalog entry
    row: dict
    rendered: Rendered | None = None
    reason: str | None = None  # refused: the group
    detail: str | None = None  # refused: which file, setting, ...
    message: str | None = None  # refused: every diagnostic
    dry_run: str | None = None  # ACCEPTED, REJECTED, NOT_RUN (None: no srtctl)
    srtctl_message: str | None = None  # why rejected / not dry-run

    def as_json(self) -> dict:
        out = {"config-key": self.key, "row": rowfit.row_label(self.row),
               "framework": self.row.get("framework"), "runner": self.row.get("runner")}
        if self.rendered is not None:
            out.update({"outcome": "rendered", "source": source_of(self.rendered),
                        "config-file": self.rendered.config_file, "recipe": self.rendered.name})
            if self.rendered.replaces:
                out["replaces"] = self.rendered.replaces
            if self.dry_run is not None:
                out["dry-run"] = self.dry_run
                if self.srtctl_message:
                    out["srtctl"] = self.srtctl_message
        else:
            out.update({"outcome": "refused", "reason": self.reason, "detail": self.detail,
                        "message": self.message})
        return out


@dataclass
class Coverage:
    outcomes: list[Outcome]
    skipped: Counter = field(default_factory=Counter)  # rows of other scenarios, by scenario
    srtctl: Srtctl | None = None
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def rendered(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.rendered is not None]

    def summary(self) -> dict:
        by_source = Counter(source_of(o.rendered) for o in self.rendered)
        refused = Counter(o.reason for o in self.outcomes if o.rendered is None)
        out = {"rows": len(self.outcomes), "rendered": len(self.rendered),
               "rendered-by-source": dict(sorted(by_source.items())),
               "accepted": None, "rejected": None, "not-dry-run": None,
               "refused": dict(refused.most_common())}
        if self.srtctl is not None:
            checks = Counter(o.dry_run for o in self.rendered)
            out.update({"accepted": checks[ACCEPTED], "rejected": checks[REJECTED],
                        "not-dry-run": checks[NOT_RUN]})
        return out

    def refusals(self) -> dict[str, dict[str, int]]:
        """reason -> detail -> rows, largest first."""
        found: dict[str, Counter] = defaultdict(Counter)
        for o in self.outcomes:
            if o.rendered is None:
                found[o.reason][o.detail] += 1
        order = Counter({r: sum(c.values()) for r, c in found.items()})
        return {r: dict(found[r].most_common()) for r, _ in order.most_common()}

    def verdicts(self, status: str) -> dict[str, int]:
        """srtctl's messages for ``status`` (REJECTED or NOT_RUN) -> rows."""
        return dict(Counter(o.srtctl_message for o in self.rendered
                            if o.dry_run == status).most_common())


def catalog_rows(config_files: list[Path], runner_file: Path,
                 scenario: str = FIXED) -> tuple[list[tuple[str, dict]], Counter]:
    """Every (config key, row) of the catalog's ``scenario``, no eval marking, and the
    number of rows of the other scenarios (not covered)."""
    from infersweep.config.catalog import load_catalog
    from infersweep.matrix.generate import Selection, generate_keyed

    catalog = load_catalog(config_files, runner_file, strict_runners=False)
    pairs, skipped = [], Counter()
    for key, row in generate_keyed(catalog, Selection(evals="none")):
        found = row.get("scenario-type", FIXED)
        if found == scenario:
            pairs.append((key, row))
        else:
            skipped[found] += 1
    return pairs, skipped


def render_all(pairs: list[tuple[str, dict]], repo: Path, srt_slurm: Path | None,
               tick=lambda n: None, missing: str = REFUSE) -> list[Outcome]:
    out = []
    for key, row in pairs:
        outcome = Outcome(key, row)
        try:
            outcome.rendered = render_row(row, repo, source=key, srt_slurm=srt_slurm,
                                          missing=missing)
        except InputError as exc:
            outcome.reason, outcome.detail = refusal.classify(exc)
            outcome.message = "\n".join(str(d) for d in exc.diagnostics)
        out.append(outcome)
        tick(len(out))
    return out


def judge(outcomes: list[Outcome], srtctl: Srtctl, *, jobs: int | None = None,
          show_progress: bool = True) -> None:
    """srtctl's dry run on every rendered recipe of a backend it has."""
    todo = []
    for o in outcomes:
        if o.rendered is None:
            continue
        if srtctl.supports(o.rendered.recipe):
            todo.append(o)
        else:
            o.dry_run = NOT_RUN
            o.srtctl_message = (f"backend '{backend_of(o.rendered.recipe)}' is not in this "
                                f"srtctl (it has {', '.join(sorted(srtctl.backends))})")
    texts = [o.rendered.text() for o in todo]
    done = [0]
    with progress.bar(len(set(texts)), "recipes dry-run by srtctl",
                      enabled=show_progress) as bar:
        def tick():
            done[0] += 1
            bar.update(done[0])

        verdicts: list[Verdict] = dry_run(srtctl, texts, jobs=jobs, tick=tick)
    for o, v in zip(todo, verdicts, strict=True):
        o.dry_run = ACCEPTED if v.accepted else REJECTED
        o.srtctl_message = v.message or None


def run(pairs: list[tuple[str, dict]], repo: Path, *, srt_slurm: Path | None,
        srtctl: Srtctl | None = None, skipped: Counter | None = None,
        jobs: int | None = None, show_progress: bool = True,
        missing: str = REFUSE) -> Coverage:
    """Render every row, then (with srtctl) dry-run every rendered recipe it can read."""
    t0 = time.monotonic()
    with progress.bar(len(pairs), "rows rendered", enabled=show_progress) as bar:
        outcomes = render_all(pairs, repo, srt_slurm, tick=bar.update, missing=missing)
    cov = Coverage(outcomes, skipped or Counter(), srtctl,
                   {"render": round(time.monotonic() - t0, 2)})
    if srtctl is not None:
        t0 = time.monotonic()
        judge(outcomes, srtctl, jobs=jobs, show_progress=show_progress)
        cov.seconds["dry-run"] = round(time.monotonic() - t0, 2)
    return cov
