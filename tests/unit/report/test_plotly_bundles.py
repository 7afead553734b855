"""The explorer's small plotly.js bundle (report/vendor, plotly.js's own basic bundle) is of
the same major version as the whole bundle the `plotly` package ships, which the explorer
loads for a view with many points: one page draws with both."""

from __future__ import annotations

import re
from importlib.resources import files

from infersweep.report import charts, site


def _version(text: str) -> tuple[int, ...]:
    m = re.search(r"plotly\.js(?: \([^)]*\))? v(\d+)\.(\d+)\.(\d+)", text[:300])
    assert m, "no plotly.js version in the bundle's header"
    return tuple(int(g) for g in m.groups())


def test_the_basic_bundle_matches_the_packaged_plotly_js():
    basic = files("infersweep.report").joinpath("vendor", site.PLOTLY_BASIC_JS).read_text()
    assert "window.Plotly = Plotly" in basic[-200:]
    assert _version(basic)[0] == _version(charts.plotly_js())[0], (
        "update infersweep/report/vendor/plotly-basic.min.js to the plotly.js version of the "
        "plotly package (see vendor/README.md)")
    assert 'name:"scattergl"' not in basic and 'name:"scatter"' in basic
