"""``build``: the whole site from staged runs, written beside ``out`` and swapped in."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from markupsafe import Markup

from infersweep.gcpause import cyclic_gc_paused
from infersweep.report import (
    agenticcharts,
    agenticview,
    comparedata,
    explorerdata,
    output,
    pareto,
    views,
)
from infersweep.report import charts as chartmod
from infersweep.report.costs import GpuCosts
from infersweep.report.views import config_page_path, run_page_path
from infersweep.store.model import StagedRun

DEFAULT_TITLE = "infersweep results"
PLOTLY_JS = "plotly.min.js"
# the explorer's first chart: plotly.js's basic bundle (SVG traces), a quarter of the load
# time of PLOTLY_JS, which it loads only for a view with too many points for SVG (vendor/)
PLOTLY_BASIC_JS = "plotly-basic.min.js"
AGENTIC_PAGE = "agentic.html"
EXPLORER_PAGE = "explorer.html"
EXPLORER_SCRIPTS = ("explorer-core.js", "explorer.js")  # copied from templates/
COMPARE_PAGE = "compare.html"  # two runs compared, over the explorer's data
COMPARE_SCRIPTS = ("compare-core.js", "compare.js")
TRENDS_PAGE = "trends.html"  # trends, calculator and evals, over the explorer's data
TRENDS_SCRIPTS = ("trends-core.js", "trends.js")
POINTS_SCRIPTS = ("points-core.js", "points.js")  # the run and config pages, over the same data
NEWEST_RUNS = 10  # a config page draws its newest runs until its reader asks for every one
CSS = "report.css"


@dataclass(frozen=True)
class ChartInfo:
    page: str       # relative path of the page
    div_id: str     # the chart's element id on that page
    title: str
    points: int     # markers drawn (the frontier lines have none)
    traces: int     # marker traces (run x topology); one frontier line per run besides


@dataclass
class BuildSummary:
    out: Path
    pages: list[str] = field(default_factory=list)
    charts: list[ChartInfo] = field(default_factory=list)

    @property
    def points_per_chart(self) -> dict[str, int]:
        """``page#div id`` -> points drawn."""
        return {f"{c.page}#{c.div_id}": c.points for c in self.charts}


@dataclass
class _RenderedChart:
    title: str
    n_points: int
    html: str


def _num(value, fmt: str) -> str:
    n = pareto.number(value)
    if n is None:
        return "" if value is None else str(value)
    return format(n, fmt)


def _pct(fraction) -> str:
    n = pareto.number(fraction)
    return "" if n is None else f"{n * 100:.1f}%"


def _ms(seconds):
    """Rows keep latencies in seconds (as InferenceX does); tables show milliseconds."""
    n = pareto.number(seconds)
    return None if n is None else n * 1000


def _environment():
    import jinja2

    env = jinja2.Environment(loader=jinja2.PackageLoader("infersweep.report", "templates"),
                             autoescape=True,
                             trim_blocks=True, lstrip_blocks=True)
    env.globals.update(num=_num, ms=_ms, pct=_pct, run_page=run_page_path,
                       config_page=config_page_path, agentic_page=AGENTIC_PAGE,
                       explorer_page=EXPLORER_PAGE, trends_page=TRENDS_PAGE)
    env.globals["compare_page"] = COMPARE_PAGE
    return env


def _key(run: StagedRun) -> str:
    """The run as the pages' scripts name it: ``<run id>-<attempt>``."""
    return f"{run.run_id}-{run.attempt}"


def _provenance(points: list[dict]) -> dict[str, list[str]]:
    return {k: sorted({str(p[k]) for p in points if p.get(k) is not None})
            for k in ("image", "srt_slurm_commit", "engine_revision", "job_id")}


class _Writer:
    def __init__(self, root: Path, summary: BuildSummary, title: str):
        self.root, self.summary, self.title = root, summary, title
        self.env = _environment()
        self.charts_on: dict[str, int] = {}  # page -> its charts so far

    def drawn(self, page: str, charts: list[views.ChartSize]) -> None:
        """What ``page``'s script draws (points.js, from the explorer's data): its charts in
        the summary, numbered in the page's order."""
        first = self.charts_on.get(page, 0)
        self.charts_on[page] = first + len(charts)
        for n, c in enumerate(charts, first):
            self.summary.charts.append(ChartInfo(page, f"chart-{n}", c.title, c.points,
                                                 c.traces))

    def copy(self, *names: str, folder: str = "templates") -> None:
        """Files of the package (our scripts, the vendored plotly.js bundle) into the site."""
        from importlib.resources import files

        for name in names:
            (self.root / name).write_bytes(
                files("infersweep.report").joinpath(folder, name).read_bytes())

    def figure(self, page: str, fig: dict, n_points: int, n: int) -> _RenderedChart:
        """A figure drawn by plotly as chart ``n`` of ``page`` (the agentic page's charts)."""
        div = f"chart-{n}"
        title = fig["layout"]["title"]["text"]
        html = Markup(chartmod.chart_html(fig, div))  # noqa: S704 - plotly's escaped JSON
        self.summary.charts.append(ChartInfo(page, div, title, n_points, len(fig["data"])))
        return _RenderedChart(title, n_points, html)

    def agentic(self, configs: list[agenticview.AgenticConfig]) -> None:
        """The agentic page: per config, both charts with a table under each."""
        sections, n = [], 0
        for cfg in configs:
            tput = self.figure(AGENTIC_PAGE, *agenticcharts.throughput(cfg), n)
            hits = self.figure(AGENTIC_PAGE, *agenticcharts.cache_hits(cfg), n + 1)
            n += 2
            sections.append({"cfg": cfg, "throughput": tput, "hits": hits})
        self.page(AGENTIC_PAGE, "agentic.html", sections=sections, local=agenticview.LOCAL,
                  charts=[c for s in sections for c in (s["throughput"], s["hits"])])

    def explorer(self, runs: list[StagedRun], costs: GpuCosts | None) -> None:
        """The explorer: its data file (every run's points, once), its scripts, its page."""
        data = explorerdata.arrange(runs, costs)
        (self.root / explorerdata.FILE).write_text(explorerdata.script(data), encoding="utf-8")
        self.copy(*EXPLORER_SCRIPTS)
        self.copy(PLOTLY_BASIC_JS, folder="vendor")
        self.page(EXPLORER_PAGE, "explorer.html", charts=False, data_file=explorerdata.FILE,
                  plotly_basic=PLOTLY_BASIC_JS, plotly_full=PLOTLY_JS,
                  n_points=len(data["points"]["series"]), n_runs=len(runs),
                  costs_file=costs.path if costs else None)

    def trends(self, site: views.SiteView, judged: bool) -> None:
        """The trends, calculator and evals page: the explorer's data (written by
        :meth:`explorer` first), the evals' data, its scripts."""
        from infersweep.report import evalsdata

        data = evalsdata.arrange(site, judged=judged)
        (self.root / evalsdata.FILE).write_text(evalsdata.script(data), encoding="utf-8")
        self.copy(*TRENDS_SCRIPTS)
        self.page(TRENDS_PAGE, "trends.html", charts=True, data_file=explorerdata.FILE,
                  evals_file=evalsdata.FILE, thresholds=judged)

    def compare(self, runs: list[StagedRun]) -> None:
        """The compare page: its data (changelogs, recipe diffs; read by this page only)
        beside the explorer's data (written by :meth:`explorer` first), its scripts."""
        data = comparedata.arrange(runs)
        (self.root / comparedata.FILE).write_text(comparedata.script(data), encoding="utf-8")
        self.copy(*COMPARE_SCRIPTS)
        self.page(COMPARE_PAGE, "compare.html", charts=False, data_file=explorerdata.FILE,
                  compare_file=comparedata.FILE)

    def config_page(self, site: views.SiteView, view: views.ConfigView) -> None:
        """A config's page: its facts and evals; its charts, runs and points are drawn by
        points.js from the explorer's data (the newest NEWEST_RUNS runs first)."""
        rel = config_page_path(view.key)
        with_points = {id(r) for r, _ in view.points}
        newest = {id(r) for r in [r for r in view.runs if id(r) in with_points][-NEWEST_RUNS:]}
        self.drawn(rel, views.chart_sizes([(site.index_of(r), r, p) for r, p in view.points
                                           if id(r) in newest]))
        self.page(rel, "config.html", view=view, newest=NEWEST_RUNS,
                  eval_runs=[_key(r) for r in view.runs if id(r) not in with_points],
                  data_file=explorerdata.FILE, plotly_basic=PLOTLY_BASIC_JS)

    def run_page(self, site: views.SiteView, i: int) -> None:
        """A staged run's page: its identity, provenance, changelog and evals; its charts and
        points, per config, are drawn by points.js from the explorer's data."""
        run = site.runs[i]
        rel = run_page_path(run)
        by_config: dict[str, list] = {}
        for p in run.points:
            by_config.setdefault(str(p.get("config_key")), []).append((i, run, p))
        for key in site.run_configs[i]:
            self.drawn(rel, views.chart_sizes(by_config.get(key, [])))
        self.page(rel, "run.html", run=run, evals=site.run_evals[i],
                  provenance=_provenance(run.points),
                  changelog_entries=comparedata.changelog_entries(run.changelog),
                  eval_configs=[[k, config_page_path(k)] for k in site.run_configs[i]
                                if k not in by_config],
                  data_file=explorerdata.FILE, plotly_basic=PLOTLY_BASIC_JS)

    def page(self, rel: str, template: str, **context) -> None:
        root = "../" * rel.count("/")
        text = self.env.get_template(template).render(title=self.title, root=root, **context)
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        self.summary.pages.append(rel)


def build(runs: list[StagedRun], out: Path, *, thresholds: dict | None = None,
          title: str = DEFAULT_TITLE, costs: GpuCosts | None = None) -> BuildSummary:
    """Write the report of ``runs`` to ``out`` (replaced whole; see :mod:`.output`).

    ``thresholds`` is the loaded ``configs/eval-thresholds.yaml`` (``evals.thresholds.load``);
    without it evals are listed but not judged. ``costs`` is the loaded GPU costs file
    (``report.costs.load``): the explorer's cost and power metrics; without it, it shows
    throughput and latency only."""
    out = Path(out)
    output.check_out(out)
    with cyclic_gc_paused():
        return _build(list(runs), out, thresholds, title, costs)


def _build(runs: list[StagedRun], out: Path, thresholds: dict | None, title: str,
           costs: GpuCosts | None) -> BuildSummary:
    site = views.arrange(runs, thresholds)
    summary = BuildSummary(out)
    with output.staged_folder(out) as tmp:
        w = _Writer(tmp, summary, title)
        (tmp / PLOTLY_JS).write_text(chartmod.plotly_js(), encoding="utf-8")
        w.copy(CSS, *POINTS_SCRIPTS)
        agentic = agenticview.arrange(site.runs)
        w.page("index.html", "index.html", site=site, charts=[], agentic=agentic)
        if agentic:
            w.agentic(agentic)
        w.explorer(site.runs, costs)
        w.compare(site.runs)
        w.trends(site, judged=thresholds is not None)
        for view in site.configs.values():
            w.config_page(site, view)
        for i in range(len(site.runs)):
            w.run_page(site, i)
    return summary
