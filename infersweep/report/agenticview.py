"""What the agentic page shows, arranged from staged runs: per config, one series per run and
KV-offload mode, the points' headline numbers, and which of them are local runs.

Agentic results are not fixed-sequence-length points: they have no ISL/OSL, and the same
recipe is measured with and without KV offload, so a config's chart has a series per
offload mode (and per staged run). Every number comes from
:func:`infersweep.store.agentic.columns`, the columns the store indexes. Everything is sorted,
so the page is the same bytes for the same runs in any order.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from infersweep.results.agenticagg import offload_mode
from infersweep.store import agentic as agenticstore
from infersweep.store.model import StagedRun

LOCAL = "local, not publishable"


@dataclass
class AgenticPoint:
    run: StagedRun
    run_index: int
    mode: str        # KV-offload mode: none, or dram/<backend>
    values: dict     # the store's columns: identity, headline numbers, publishable, scaled
    entry: dict      # the aggregate entry (the whole result inside)

    @property
    def local(self) -> bool:
        """A scaled-down local run (or any result that may not be published)."""
        return not self.values["publishable"]


@dataclass
class AgenticSeries:
    run: StagedRun
    run_index: int
    mode: str
    points: list[AgenticPoint]   # by concurrency

    @property
    def local(self) -> bool:
        return any(p.local for p in self.points)

    @property
    def name(self) -> str:
        name = f"{self.run.label} · KV offload {self.mode}"
        return f"{name} ({LOCAL})" if self.local else name


@dataclass
class AgenticConfig:
    key: str
    series: list[AgenticSeries] = field(default_factory=list)

    @property
    def points(self) -> list[AgenticPoint]:
        return [p for s in self.series for p in s.points]

    @property
    def anchor(self) -> str:
        """The config's section id on the agentic page (safe, as page names are)."""
        from infersweep.report.views import file_stem

        return file_stem(self.key)

    @property
    def n_local(self) -> int:
        return sum(p.local for p in self.points)

    def facts(self, name: str) -> list[str]:
        return sorted({str(p.entry["result"].get(name)) for p in self.points
                       if p.entry["result"].get(name) is not None})


def arrange(runs: list[StagedRun]) -> list[AgenticConfig]:
    """The agentic results of ``runs`` (oldest first: the run index picks the colour) by
    config, then run and KV-offload mode, then concurrency."""
    groups: dict[tuple, list[AgenticPoint]] = {}
    for i, run in enumerate(runs):
        for e in run.agentic:
            values = agenticstore.columns(e)
            mode = offload_mode(e["result"])
            groups.setdefault((e["config_key"], i, mode), []).append(
                AgenticPoint(run, i, mode, values, e))
    configs: dict[str, AgenticConfig] = {}
    for key, i, mode in sorted(groups):
        pts = sorted(groups[(key, i, mode)],
                     key=lambda p: (p.values["conc"], p.values["recipe_fingerprint"],
                                    p.entry["name"]))
        configs.setdefault(key, AgenticConfig(key)).series.append(
            AgenticSeries(pts[0].run, i, mode, pts))
    return [configs[k] for k in sorted(configs)]
