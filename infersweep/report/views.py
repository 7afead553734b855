"""What the pages show, arranged from staged runs: configs, their charts, points and evals.

Everything is sorted here, so a site built twice from the same runs (in any order) is the
same byte for byte.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from infersweep.diagnostics import InputError
from infersweep.evals import thresholds as thresholdmod
from infersweep.report import pareto
from infersweep.store.model import StagedRun

SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]")


def file_stem(text: str) -> str:
    """A file name for a run id or config key: safe characters kept, others as ``_``; a name
    that had to change gets a short hash so two different keys never share a page."""
    import hashlib

    safe = SAFE_NAME.sub("_", text)[:120] or "_"
    if safe != text or safe.startswith("."):
        safe = f"{safe.lstrip('.') or '_'}-{hashlib.sha256(text.encode()).hexdigest()[:8]}"
    return safe


def run_order(run: StagedRun) -> tuple:
    return (run.staged_at or "", run.created_at or "", run.run_id, run.attempt)


@dataclass
class Series:
    """One trace: a run's points of one topology (recipe) in one chart."""
    run: StagedRun
    run_index: int          # position among all runs, oldest first (picks the colour)
    recipe_name: str
    topology: str
    points: list[dict]      # plottable points by concurrency

    @property
    def name(self) -> str:
        return f"{self.run.label} · {self.topology or self.recipe_name}"


@dataclass
class Chart:
    """Throughput per GPU against interactivity for one sequence length of one config."""
    isl: int
    osl: int
    scale_down: float
    series: list[Series] = field(default_factory=list)

    @property
    def title(self) -> str:
        t = f"ISL {self.isl} / OSL {self.osl}"
        return t if self.scale_down == 1 else f"{t} (scaled down {self.scale_down:g}×)"

    @property
    def n_points(self) -> int:
        return sum(len(s.points) for s in self.series)

    def frontiers(self) -> list[tuple[StagedRun, int, list[dict]]]:
        """Per run, the frontier across its topologies: (run, run index, points)."""
        by_run: dict[int, tuple[StagedRun, list[dict]]] = {}
        for s in self.series:
            by_run.setdefault(s.run_index, (s.run, []))[1].extend(s.points)
        return [(run, i, pareto.frontier(pts)) for i, (run, pts) in sorted(by_run.items())]


@dataclass
class JudgedEval:
    row: dict
    run: StagedRun
    threshold: float | None
    threshold_source: str | None

    @property
    def passed(self) -> bool | None:
        if self.threshold is None:
            return None
        scores = [pareto.number(self.row.get(k)) for k in ("em-strict", "em-flexible")]
        return all(s is not None and s >= self.threshold for s in scores)


@dataclass
class ConfigView:
    key: str
    runs: list[StagedRun] = field(default_factory=list)  # oldest first
    points: list[tuple[StagedRun, dict]] = field(default_factory=list)
    evals: list[JudgedEval] = field(default_factory=list)

    def facts(self, name: str) -> list[str]:
        """The distinct values of a field over the points (model, hw, ...)."""
        return sorted({str(p.get(name)) for _, p in self.points if p.get(name) is not None})


def point_order(p: dict) -> tuple:
    return (str(p.get("recipe_name")), str(p.get("topology")), p.get("isl") or 0,
            p.get("osl") or 0, p.get("scale_down") or 1, p.get("conc") or 0,
            p.get("attempt") or 0)


def charts_of(pairs: list[tuple[int, StagedRun, dict]]) -> list[Chart]:
    """Charts for (run index, run, point) triples: one per sequence length, a series per run
    and topology, points by concurrency."""
    charts: dict[tuple, Chart] = {}
    groups: dict[tuple, list[dict]] = {}
    runs: dict[int, StagedRun] = {}
    for i, run, p in pairs:
        if not pareto.plottable(p):
            continue
        ck = (int(p["isl"]), int(p["osl"]), float(p.get("scale_down") or 1))
        charts.setdefault(ck, Chart(*ck))
        sk = ck + (i, str(p["recipe_name"]), str(p.get("topology") or ""))
        groups.setdefault(sk, []).append(p)
        runs[i] = run
    for sk in sorted(groups):
        ck, (i, recipe, topo) = sk[:3], sk[3:]
        pts = sorted(groups[sk], key=lambda p: (p["conc"], p.get("attempt") or 0))
        charts[ck].series.append(Series(runs[i], i, recipe, topo, pts))
    return [charts[k] for k in sorted(charts)]


def judge(row: dict, run: StagedRun, limits: dict | None) -> JudgedEval:
    """The eval's threshold as ``eval check`` picks it: the row's model prefix, else the model
    name, longest matching prefix under ``models``, else ``default``."""
    if limits is None:
        return JudgedEval(row, run, None, None)
    try:
        th = thresholdmod.for_model(limits, row.get("model-prefix"), row.get("model") or "",
                                    row.get("task") or "gsm8k")
    except InputError:
        return JudgedEval(row, run, None, None)
    return JudgedEval(row, run, th.value, th.source)


def eval_order(e: JudgedEval) -> tuple:
    r = e.row
    return (str(r.get("config-key") or ""), str(r.get("recipe-fingerprint") or ""),
            str(r.get("task") or ""), run_order(e.run), r.get("attempt") or 0,
            str(r.get("source") or ""))


@dataclass
class SiteView:
    runs: list[StagedRun]                  # oldest first
    configs: dict[str, ConfigView]         # by key, sorted
    run_configs: dict[int, list[str]]      # run index -> its config keys
    run_evals: dict[int, list[JudgedEval]]

    def index_of(self, run: StagedRun) -> int:
        return next(i for i, r in enumerate(self.runs) if r is run)


def arrange(runs: list[StagedRun], limits: dict | None) -> SiteView:
    seen: dict[tuple[str, int], StagedRun] = {}
    for r in runs:
        k = (str(r.run_id), int(r.attempt))
        if k in seen:
            raise InputError(f"run {r.label} is given twice; give each staged run once")
        seen[k] = r
    ordered = sorted(runs, key=run_order)
    configs: dict[str, ConfigView] = {}
    run_configs: dict[int, list[str]] = {}
    run_evals: dict[int, list[JudgedEval]] = {}
    for i, run in enumerate(ordered):
        keys = set()
        for p in sorted(run.points, key=lambda p: (str(p.get("config_key")),) + point_order(p)):
            key = str(p.get("config_key"))
            view = configs.setdefault(key, ConfigView(key))
            if not view.runs or view.runs[-1] is not run:
                view.runs.append(run)
            view.points.append((run, p))
            keys.add(key)
        judged = sorted((judge(e, run, limits) for e in run.evals), key=eval_order)
        run_evals[i] = judged
        for e in judged:
            if e.row.get("config-key") is None:
                continue  # no provenance: shown on the run's page only
            key = str(e.row["config-key"])
            view = configs.setdefault(key, ConfigView(key))
            if not any(r is run for r in view.runs):
                view.runs.append(run)
            view.evals.append(e)
            keys.add(key)
        run_configs[i] = sorted(keys)
    for view in configs.values():
        view.runs.sort(key=run_order)
        view.evals.sort(key=eval_order)
    return SiteView(ordered, dict(sorted(configs.items())), run_configs, run_evals)
