"""The report rebuilt from every run in a results store: what staging does after an ingest."""

from __future__ import annotations

from pathlib import Path

from infersweep.evals.thresholds import DEFAULT_PATH
from infersweep.report.site import DEFAULT_TITLE, BuildSummary, build

THRESHOLDS = Path(DEFAULT_PATH)


def load_limits(path: Path | None, *, default: Path = THRESHOLDS, warn=None) -> dict | None:
    """The eval thresholds: ``path``, else ``default`` when it exists, else None (evals are
    shown unjudged, and ``warn`` is told)."""
    from infersweep.evals import thresholds

    if path is not None:
        return thresholds.load(str(path))
    if default.is_file():
        return thresholds.load(str(default))
    if warn is not None:
        warn(f"no {default} here and no --thresholds: evals are shown without a verdict")
    return None


def rebuild(store, out: Path, *, thresholds_file: Path | None = None,
            title: str = DEFAULT_TITLE) -> tuple[list, BuildSummary]:
    """Every staged run of ``store`` (an open Store) into the site at ``out``."""
    runs = list(store.staged_runs())
    from infersweep.report import costs

    return runs, build(runs, out, thresholds=load_limits(thresholds_file), title=title,
                       costs=costs.load_default())
