"""The browser helper's own parts: required-or-skip, PNG header, counting drawn points."""

from __future__ import annotations

import struct
import zlib

import pytest

from tests import browser


def test_a_missing_browser_skips_unless_it_is_required(monkeypatch):
    monkeypatch.setenv("PATH", "")
    monkeypatch.delenv(browser.REQUIRE_ENV, raising=False)
    with pytest.raises(pytest.skip.Exception):
        browser.chromium()
    monkeypatch.setenv(browser.REQUIRE_ENV, "1")
    with pytest.raises(pytest.fail.Exception, match="INFERSWEEP_REQUIRE_BROWSER is set"):
        browser.chromium()


def test_png_size_reads_the_header():
    ihdr = struct.pack(">IIBBBBB", 640, 480, 8, 2, 0, 0, 0)
    png = (b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + ihdr
           + struct.pack(">I", zlib.crc32(b"IHDR" + ihdr)))
    assert browser.png_size(png) == (640, 480)
    with pytest.raises(AssertionError):
        browser.png_size(b"GIF89a" + bytes(30))


def test_points_are_counted_per_chart_only_inside_scatter_traces():
    dom = """<html><head><script src="../plotly.min.js"></script><link rel=stylesheet
    href="https://cdn.example/x.css"><meta charset=utf-8></head><body>
    <div id="chart-0" class="plotly-graph-div" data-rendered="yes"><svg>
      <g class="scatterlayer"><g class="trace"><g class="points"><path class="point"/>
      <path class="point"></path></g></g><g class="trace"><path class="js-line"/></g></g>
      <g class="legend"><text class="legendtext">run · 1p&lt;b&gt;</text></g>
      <path class="point"/></svg></div>
    <div id="chart-1" class="plotly-graph-div"><g class="scatterlayer"><g class="trace">
      <path class="point"/></g></g></div><br><img src=x></body></html>"""
    facts = browser.dom_facts(dom)
    c0, c1 = facts.charts["chart-0"], facts.charts["chart-1"]
    assert (c0.rendered, c0.points, c0.traces, c0.legend) == (True, 2, 2, ["run · 1p<b>"])
    assert (c1.rendered, c1.points, c1.traces) == (False, 1, 1)
    assert facts.sources == ["../plotly.min.js", "https://cdn.example/x.css"]
    assert facts.elements["img"] == 1
