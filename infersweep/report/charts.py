"""The HTML of a plotly figure drawn by the page (the agentic page's charts; plotly.js itself
is loaded once per page), and plotly.js for the site.

Figures are plain dicts (no template inlined, so pages stay small); each chart's
``post_script`` marks its div ``data-rendered="yes"`` once plotly has drawn it, which is what
a browser check waits for. Every text plotly shows is HTML-escaped first: plotly renders a
subset of HTML tags in names and hover text. The run and config pages draw their charts in
the browser (templates/points-core.js), from the explorer's data.
"""

from __future__ import annotations

import html

# the agentic page: one colour per run (by age, cycling), one marker symbol per topology
COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf")
SYMBOLS = ("circle", "square", "diamond", "triangle-up", "x", "cross", "star", "hexagon",
           "triangle-down", "pentagon")
RENDERED = "rendered"  # the data attribute post_script sets
POST_SCRIPT = f"document.getElementById('{{plot_id}}').dataset.{RENDERED} = 'yes';"
HEIGHT = 520


def _text(s) -> str:
    return html.escape(str(s), quote=False)


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
