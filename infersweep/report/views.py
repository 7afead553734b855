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


def run_page_path(run: StagedRun) -> str:
    """The staged run's page, relative to the site root: ``runs/<run id>-<attempt>.html``
    (a run id with characters outside ``A-Za-z0-9._-`` gets them as ``_`` and a short hash)."""
    return f"runs/{file_stem(f'{run.run_id}-{run.attempt}')}.html"


def config_page_path(key: str) -> str:
    """A config's page, relative to the site root: ``configs/<config key>.html``."""
    return f"configs/{file_stem(key)}.html"


def run_order(run: StagedRun) -> tuple:
    return (run.staged_at or "", run.created_at or "", run.run_id, run.attempt)


@dataclass(frozen=True)
class ChartSize:
    """A chart a run or config page draws (throughput per GPU against interactivity for one
    sequence length): its title, points and marker traces (one per run and topology)."""
    title: str
    points: int
    traces: int


def chart_title(isl: int, osl: int, scale_down: float) -> str:
    t = f"ISL {isl} / OSL {osl}"
    return t if scale_down == 1 else f"{t} (scaled down {scale_down:g}×)"


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
    _facts: dict[str, list[str]] = field(default_factory=dict, repr=False, compare=False)

    def facts(self, name: str) -> list[str]:
        """The distinct values of a field over the points (model, hw, ...)."""
        if name not in self._facts:
            values = {p.get(name) for _, p in self.points}
            values.discard(None)
            self._facts[name] = sorted({str(v) for v in values})
        return self._facts[name]


def point_order(p: dict) -> tuple:
    return (str(p.get("recipe_name")), str(p.get("topology")), p.get("isl") or 0,
            p.get("osl") or 0, p.get("scale_down") or 1, p.get("conc") or 0,
            p.get("attempt") or 0)


def chart_sizes(pairs: list[tuple[int, StagedRun, dict]]) -> list[ChartSize]:
    """The charts of (run index, run, point) triples, as the pages' script draws them: one per
    ISL/OSL and scale-down, by those numbers, of the plottable points with an ISL and OSL; a
    trace per run and topology."""
    charts: dict[tuple, tuple[list[int], set]] = {}
    for i, _run, p in pairs:
        if not pareto.plottable(p) or p.get("isl") is None or p.get("osl") is None:
            continue
        ck = (int(p["isl"]), int(p["osl"]), float(p.get("scale_down") or 1))
        count, series = charts.setdefault(ck, ([0], set()))
        count[0] += 1
        series.add((i, str(p.get("recipe_name")), str(p.get("topology") or "")))
    return [ChartSize(chart_title(*ck), charts[ck][0][0], len(charts[ck][1]))
            for ck in sorted(charts)]


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
    _index: dict[int, int] = field(default_factory=dict, repr=False)  # id(run) -> position

    def index_of(self, run: StagedRun) -> int:
        if len(self._index) != len(self.runs):
            self._index = {id(r): i for i, r in enumerate(self.runs)}
        return self._index[id(run)]


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
