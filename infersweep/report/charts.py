"""Plotly figures for the charts, and their HTML (plotly.js itself is loaded once per page).

Figures are plain dicts (no template inlined, so pages stay small); each chart's
``post_script`` marks its div ``data-rendered="yes"`` once plotly has drawn it, which is what
a browser check waits for. Every text plotly shows is HTML-escaped first: plotly renders a
subset of HTML tags in names and hover text.
"""

from __future__ import annotations

import html

from infersweep.report import pareto
from infersweep.report.views import Chart

# one colour per run (by age, cycling), one marker symbol per topology within a chart
COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf")
SYMBOLS = ("circle", "square", "diamond", "triangle-up", "x", "cross", "star", "hexagon",
           "triangle-down", "pentagon")
RENDERED = "rendered"  # the data attribute post_script sets
POST_SCRIPT = f"document.getElementById('{{plot_id}}').dataset.{RENDERED} = 'yes';"
HEIGHT = 520


def _text(s) -> str:
    return html.escape(str(s), quote=False)


def _hover(p: dict) -> str:
    def num(v, fmt, scale=1.0):
        v = pareto.number(v)
        return "–" if v is None else format(v * scale, fmt)
    return (f"{_text(p.get('recipe_name'))}<br>conc {p.get('conc')}<br>"
            f"{num(p.get(pareto.Y), ',.1f')} tok/s/GPU<br>"
            f"{num(p.get(pareto.X), ',.2f')} tok/s/user<br>"
            f"TTFT {num(p.get('median_ttft'), ',.1f', 1000)} ms · TPOT "  # rows keep seconds
            f"{num(p.get('median_tpot'), ',.2f', 1000)} ms<br>"
            f"job {_text(p.get('job_id'))} · attempt {p.get('attempt')}")


def figure(chart: Chart) -> dict:
    data = []
    symbols: dict[str, str] = {}
    for s in chart.series:
        topo = s.topology or s.recipe_name
        symbol = symbols.setdefault(topo, SYMBOLS[len(symbols) % len(SYMBOLS)])
        data.append({
            "type": "scatter", "mode": "markers", "name": _text(s.name),
            "legendgroup": f"run{s.run_index}",
            "x": [pareto.number(p[pareto.X]) for p in s.points],
            "y": [pareto.number(p[pareto.Y]) for p in s.points],
            "text": [_hover(p) for p in s.points], "hovertemplate": "%{text}<extra></extra>",
            "marker": {"color": COLOURS[s.run_index % len(COLOURS)], "symbol": symbol,
                       "size": 9},
        })
    for run, i, front in chart.frontiers():
        data.append({
            "type": "scatter", "mode": "lines", "name": _text(f"{run.label} · Pareto frontier"),
            "legendgroup": f"run{i}", "hoverinfo": "skip",
            "x": [pareto.number(p[pareto.X]) for p in front],
            "y": [pareto.number(p[pareto.Y]) for p in front],
            "line": {"color": COLOURS[i % len(COLOURS)], "dash": "dash", "width": 2},
        })
    layout = {
        "title": {"text": _text(chart.title)}, "height": HEIGHT,
        "margin": {"l": 70, "r": 20, "t": 50, "b": 60},
        "xaxis": {"title": {"text": "Interactivity (tok/s/user, median)"}, "rangemode": "tozero"},
        "yaxis": {"title": {"text": "Throughput per GPU (tok/s/GPU)"}, "rangemode": "tozero"},
        "legend": {"orientation": "h", "y": -0.18}, "hovermode": "closest",
    }
    return {"data": data, "layout": layout}


def chart_html(fig: dict, div_id: str) -> str:
    """The chart's div and the script that draws it (plotly.js must be loaded before)."""
    import plotly.io as pio

    return pio.to_html(fig, include_plotlyjs=False, full_html=False, div_id=div_id,
                       default_height=f"{HEIGHT}px", validate=False, post_script=POST_SCRIPT,
                       config={"displaylogo": False, "responsive": True})


def plotly_js() -> str:
    """plotly.js from the installed plotly package (written once per site)."""
    from plotly.offline import get_plotlyjs

    return get_plotlyjs()
