"""``build``: the whole site from staged runs, written beside ``out`` and swapped in."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from markupsafe import Markup

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
CSS = "report.css"


def run_page_path(run: StagedRun) -> str:
    """The staged run's page, relative to the site root: ``runs/<run id>-<attempt>.html``
    (a run id with characters outside ``A-Za-z0-9._-`` gets them as ``_`` and a short hash)."""
    return f"runs/{views.file_stem(f'{run.run_id}-{run.attempt}')}.html"


def config_page_path(key: str) -> str:
    """A config's page, relative to the site root: ``configs/<config key>.html``."""
    return f"configs/{views.file_stem(key)}.html"


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


def _provenance(points: list[dict]) -> dict[str, list[str]]:
    return {k: sorted({str(p[k]) for p in points if p.get(k) is not None})
            for k in ("image", "srt_slurm_commit", "engine_revision", "job_id")}


class _Writer:
    def __init__(self, root: Path, summary: BuildSummary, title: str):
        self.root, self.summary, self.title = root, summary, title
        self.env = _environment()

    def charts(self, page: str, charts: list[views.Chart], first: int = 0):
        out = []
        for n, c in enumerate(charts, first):
            div = f"chart-{n}"
            # plotly's own output: its JSON has <, > and / escaped (safe inside <script>)
            html = Markup(chartmod.chart_html(chartmod.figure(c), div))  # noqa: S704
            out.append(_RenderedChart(c.title, c.n_points, html))
            self.summary.charts.append(ChartInfo(page, div, c.title, c.n_points,
                                                 len(c.series)))
        return out

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
        from importlib.resources import files

        data = explorerdata.arrange(runs, costs)
        (self.root / explorerdata.FILE).write_text(explorerdata.script(data), encoding="utf-8")
        for name in EXPLORER_SCRIPTS:
            (self.root / name).write_bytes(
                files("infersweep.report").joinpath("templates", name).read_bytes())
        (self.root / PLOTLY_BASIC_JS).write_bytes(
            files("infersweep.report").joinpath("vendor", PLOTLY_BASIC_JS).read_bytes())
        self.page(EXPLORER_PAGE, "explorer.html", charts=False, data_file=explorerdata.FILE,
                  plotly_basic=PLOTLY_BASIC_JS, plotly_full=PLOTLY_JS,
                  n_points=len(data["points"]["series"]), n_runs=len(runs),
                  costs_file=costs.path if costs else None)

    def trends(self, site: views.SiteView, judged: bool) -> None:
        """The trends, calculator and evals page: the explorer's data (written by
        :meth:`explorer` first), the evals' data, its scripts."""
        from importlib.resources import files

        from infersweep.report import evalsdata

        data = evalsdata.arrange(site, judged=judged)
        (self.root / evalsdata.FILE).write_text(evalsdata.script(data), encoding="utf-8")
        for name in TRENDS_SCRIPTS:
            (self.root / name).write_bytes(
                files("infersweep.report").joinpath("templates", name).read_bytes())
        self.page(TRENDS_PAGE, "trends.html", charts=True, data_file=explorerdata.FILE,
                  evals_file=evalsdata.FILE, thresholds=judged)

    def compare(self, runs: list[StagedRun]) -> None:
        """The compare page: its data (changelogs, recipe diffs; read by this page only)
        beside the explorer's data (written by :meth:`explorer` first), its scripts."""
        from importlib.resources import files

        data = comparedata.arrange(runs)
        (self.root / comparedata.FILE).write_text(comparedata.script(data), encoding="utf-8")
        for name in COMPARE_SCRIPTS:
            (self.root / name).write_bytes(
                files("infersweep.report").joinpath("templates", name).read_bytes())
        self.page(COMPARE_PAGE, "compare.html", charts=False, data_file=explorerdata.FILE,
                  compare_file=comparedata.FILE)

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
    site = views.arrange(list(runs), thresholds)
    summary = BuildSummary(out)
    with output.staged_folder(out) as tmp:
        w = _Writer(tmp, summary, title)
        (tmp / PLOTLY_JS).write_text(chartmod.plotly_js(), encoding="utf-8")
        from importlib.resources import files

        (tmp / CSS).write_bytes(files("infersweep.report").joinpath("templates", CSS)
                                .read_bytes())
        agentic = agenticview.arrange(site.runs)
        w.page("index.html", "index.html", site=site, charts=[], agentic=agentic)
        if agentic:
            w.agentic(agentic)
        w.explorer(site.runs, costs)
        w.compare(site.runs)
        w.trends(site, judged=thresholds is not None)
        for key, view in site.configs.items():
            rel = config_page_path(key)
            pairs = [(site.index_of(r), r, p) for r, p in view.points]
            w.page(rel, "config.html", view=view, charts=w.charts(rel, views.charts_of(pairs)))
        for i, run in enumerate(site.runs):
            rel = run_page_path(run)
            sections, n = [], 0
            for key in site.run_configs[i]:
                pts = sorted((p for p in run.points if str(p.get("config_key")) == key),
                             key=views.point_order)
                rendered = w.charts(rel, views.charts_of([(i, run, p) for p in pts]), n)
                n += len(rendered)
                sections.append({"key": key, "charts": rendered,
                                 "points": [(run, p) for p in pts]})
            w.page(rel, "run.html", run=run, sections=sections,
                   charts=[c for s in sections for c in s["charts"]],
                   evals=site.run_evals[i], provenance=_provenance(run.points),
                   changelog_entries=comparedata.changelog_entries(run.changelog))
    return summary
