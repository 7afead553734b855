"""The explorer driven in the system Chromium through Selenium and Debian's chromedriver (no
browser download): the default view, a filter and an axis changed, the view kept in the URL
fragment across a reload and back, the CSV exported and read, and a screenshot of the default
view (written to docs/img/explorer.png when INFERSWEEP_TEST_DOCS_SCREENSHOTS=1)."""

from __future__ import annotations

import csv
import dataclasses
import os
from pathlib import Path

import pytest

from infersweep.report import build, costs, fromrun
from tests import browser, reportruns
from tests.webdriver import WINDOW
from tests.webdriver import chromium_driver as _driver
from tests.webdriver import wait_for as _wait

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[3]
DOCS_IMAGE = REPO / "docs" / "img" / "explorer.png"


def _drawn(driver) -> int | None:
    """The chart's plotted points once it is drawn (the page sets both on the div)."""
    return driver.execute_script(
        "const c = document.getElementById('explorer-chart');"
        "return c.dataset.rendered === 'yes' ? Number(c.dataset.points) : null;")


def _redraw(driver, action) -> int:
    driver.execute_script("delete document.getElementById('explorer-chart').dataset.rendered")
    action()
    n = _wait(lambda: _drawn(driver))
    assert n is not None, "the chart was not drawn again"
    return n


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """Two runs of the seed config and an fp8 variant of it (its own frontier group)."""
    tmp = tmp_path_factory.mktemp("explorer")
    runs = []
    for i, rid in enumerate(("33825304569", "33825304570")):
        run = fromrun.load(reportruns.write_run(tmp / rid, rid, seed=i))
        fp8 = [{**p, "config_key": "dsv4-fp8-mi355x-atom-disagg", "precision": "fp8",
                "tput_per_gpu": p["tput_per_gpu"] * 0.8} for p in run.points]
        runs.append(dataclasses.replace(run, points=run.points + fp8,
                                        created_at=f"2026-12-0{i + 1}T00:00:00Z"))
    build(runs, tmp / "site", costs=costs.load(REPO / "configs" / "gpu-costs.yaml"))
    return tmp / "site", runs


def test_explorer_default_view_filters_axes_fragment_and_csv(site, tmp_path):
    out, runs = site
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    with _driver(tmp_path) as driver:
        url = (out / "explorer.html").as_uri()
        driver.get(url)
        shown = _wait(lambda: _drawn(driver))
        # the default view: the seed model at 8k/1k, the newest run of each config, frontiers
        sel = {k: Select(driver.find_element(By.ID, k)) for k in ("y", "x", "seq", "run",
                                                                   "precision")}
        assert sel["seq"].first_selected_option.get_attribute("value") == "8k/1k"
        assert sel["run"].first_selected_option.get_attribute("value") == "newest"
        assert driver.find_element(By.ID, "frontier").is_selected()
        legend = driver.execute_script(
            "return explorerView.list.map(g => [g.name, new Set(g.points.map("
            "e => e.p.s.run)).size])")
        assert sorted(n for n, _ in legend) == ["mi355x-disagg · atom-disagg · fp4 · none",
                                                "mi355x-disagg · atom-disagg · fp8 · none"]
        assert all(k == 1 for _, k in legend)  # the newest run only
        assert shown == len(driver.find_elements(By.CSS_SELECTOR, "#points tbody tr")) > 0
        if os.environ.get("INFERSWEEP_TEST_DOCS_SCREENSHOTS", "") not in ("", "0"):
            DOCS_IMAGE.parent.mkdir(parents=True, exist_ok=True)
            driver.save_screenshot(str(DOCS_IMAGE))
        png = tmp_path / "explorer.png"
        driver.save_screenshot(str(png))
        assert browser.png_size(png.read_bytes()) == WINDOW

        # an axis and a filter, by the real controls
        _redraw(driver, lambda: sel["y"].select_by_value("cost_rental"))
        n = _redraw(driver, lambda: sel["precision"].select_by_value("fp8"))
        assert 0 < n < shown
        view = driver.current_url.split("#", 1)[1]
        assert view == "y=cost_rental&precision=fp8"
        assert driver.execute_script("return explorerView.list.length") == 1

        # a reload (a shared link) opens the same view; back returns to the one before
        driver.refresh()
        assert _wait(lambda: _drawn(driver)) == n
        sel = {k: Select(driver.find_element(By.ID, k)) for k in ("y", "precision")}
        assert sel["y"].first_selected_option.get_attribute("value") == "cost_rental"
        assert sel["precision"].first_selected_option.get_attribute("value") == "fp8"
        driver.back()
        assert _wait(lambda: driver.current_url.endswith("#y=cost_rental"))
        assert _wait(lambda: Select(driver.find_element(By.ID, "precision"))
                     .first_selected_option.get_attribute("value") == "")
        driver.forward()
        assert _wait(lambda: driver.current_url.endswith("precision=fp8"))

        # the CSV of the chart's data: a line per plotted point, with its run id
        _wait(lambda: _drawn(driver))
        driver.find_element(By.ID, "csv").click()
        path = tmp_path / "explorer.csv"
        assert _wait(lambda: path.is_file() and path.stat().st_size > 0), "no CSV downloaded"
        rows = list(csv.DictReader(path.open()))
        assert len(rows) == n
        assert {r["run_id"] for r in rows} == {runs[1].run_id}
        assert {r["precision"] for r in rows} == {"fp8"}
        assert all(float(r["y_cost_rental"]) > 0 and r["on_frontier"] == "yes" for r in rows)
