"""The explorer driven in the system Chromium through Selenium and Debian's chromedriver (no
browser download): the default view, a filter and an axis changed, the view kept in the URL
fragment across a reload and back, the CSV exported and read; the agentic-coding view with its
points and cache hit rates, a PNG exported, the controls by keyboard, and the page at a phone's
width. Screenshots of the default, agentic and phone views are written to docs/img/ when
INFERSWEEP_TEST_DOCS_SCREENSHOTS=1."""

from __future__ import annotations

import copy
import csv
import dataclasses
import os
from pathlib import Path

import pytest

from infersweep.report import build, costs, fromrun
from infersweep.results.agenticagg import offload_mode
from tests import browser, reportruns
from tests.unit.store import agentic_data
from tests.webdriver import WINDOW
from tests.webdriver import chromium_driver as _driver
from tests.webdriver import wait_for as _wait

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[3]
DOCS_IMAGE = REPO / "docs" / "img" / "explorer.png"
DOCS_AGENTIC = REPO / "docs" / "img" / "explorer-agentic.png"
DOCS_PHONE = REPO / "docs" / "img" / "explorer-phone.png"
PHONE = (390, 844)
AGENTIC_CONCS = (2, 4, 8, 16)


def _docs_screenshot(driver, path: Path) -> None:
    if os.environ.get("INFERSWEEP_TEST_DOCS_SCREENSHOTS", "") not in ("", "0"):
        path.parent.mkdir(parents=True, exist_ok=True)
        driver.save_screenshot(str(path))


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


def _agentic_entries(tmp: Path) -> list[dict]:
    """Agentic results of one config at four concurrencies, without KV offload (publishable)
    and with DRAM offload (a local run): more throughput and CPU-tier hits with offload."""
    agentic_data.publishable_job(tmp / "none")
    agentic_data.local_job(tmp / "dram", **agentic_data.OFFLOAD)
    out = []
    for e in agentic_data.entries(tmp / "none", tmp / "dram"):
        offload = offload_mode(e["result"]) != "none"
        for k, conc in enumerate(AGENTIC_CONCS):
            c = copy.deepcopy(e)
            r, c["name"] = c["result"], f"{e['name']}-c{conc}"
            r["conc"] = conc
            r["request_metrics"]["throughput"]["per_gpu"]["total_tput_tps"] *= (
                (1 + k) ** 0.8 * (1.2 if offload else 1))
            r["request_metrics"]["latency"]["intvty"]["p50"] /= (1 + k) ** 0.4
            r["server_metrics"]["server_gpu_cache_hit_rate"] = 0.78 - 0.09 * k
            r["server_metrics"]["server_cpu_cache_hit_rate"] = 0.05 + (0.07 * k if offload else 0)
            out.append(c)
    return out


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """Two runs of the seed config and an fp8 variant of it (its own frontier group); the
    newer one has agentic results too."""
    tmp = tmp_path_factory.mktemp("explorer")
    runs = []
    for i, rid in enumerate(("33825304569", "33825304570")):
        run = fromrun.load(reportruns.write_run(tmp / rid, rid, seed=i))
        fp8 = [{**p, "config_key": "dsv4-fp8-mi355x-atom-disagg", "precision": "fp8",
                "tput_per_gpu": p["tput_per_gpu"] * 0.8} for p in run.points]
        runs.append(dataclasses.replace(run, points=run.points + fp8,
                                        created_at=f"2026-12-0{i + 1}T00:00:00Z",
                                        agentic=_agentic_entries(tmp / "agentic") if i else []))
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
        _docs_screenshot(driver, DOCS_IMAGE)
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
        # the trends page opens on this view (the keys are shared)
        link = driver.find_element(By.ID, "trends-link").get_attribute("href")
        assert link.endswith("trends.html#" + view), link

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


def _hits_drawn(driver) -> int | None:
    return driver.execute_script(
        "const c = document.getElementById('hits-chart');"
        "return c.dataset.points ? Number(c.dataset.points) : null;")


def test_agentic_view_png_keyboard_and_a_phone(site, tmp_path):
    out, runs = site
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    url = (out / "explorer.html").as_uri()
    with _driver(tmp_path) as driver:
        driver.get(url)
        _wait(lambda: _drawn(driver))

        # the agentic-coding view, by its link: a frontier per KV-offload mode, the hit rates
        n = _redraw(driver, lambda: driver.find_element(By.LINK_TEXT, "Agentic coding").click())
        assert driver.current_url.endswith("#model=&seq=agentic")
        groups = driver.execute_script("return explorerView.list.map(g => g.name)")
        assert sorted(g.rsplit(" · ", 1)[1] for g in groups) == [
            "KV offload dram/lmcache", "KV offload none"]
        assert 2 <= n <= 2 * len(AGENTIC_CONCS)
        assert _wait(lambda: _hits_drawn(driver)) == 2 * len(AGENTIC_CONCS) * 3  # 3 rates
        assert driver.find_element(By.ID, "agentic").is_displayed()
        rows = driver.find_elements(By.CSS_SELECTOR, "#hits tbody tr")
        assert len(rows) == 2 * len(AGENTIC_CONCS)
        local = driver.find_elements(By.CSS_SELECTOR, "#hits tbody tr.local")
        assert len(local) == len(AGENTIC_CONCS)
        assert all(r.text.endswith("local, not publishable") for r in local)
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": WINDOW[0], "height": 2150, "deviceScaleFactor": 1, "mobile": False})
        _docs_screenshot(driver, DOCS_AGENTIC)
        driver.find_element(By.ID, "csv-hits").click()
        hits = tmp_path / "explorer-cache-hits.csv"
        assert _wait(lambda: hits.is_file() and hits.stat().st_size > 0), "no CSV downloaded"
        rows = list(csv.DictReader(hits.open()))
        assert len(rows) == 2 * len(AGENTIC_CONCS)
        assert {r["run_id"] for r in rows} == {runs[1].run_id}
        assert sorted(r["local"] for r in rows) == ["no"] * 4 + ["yes"] * 4

        # PNG export: plotly's image of the chart, downloaded
        driver.find_element(By.ID, "png").click()
        png = tmp_path / "explorer.png"
        assert _wait(lambda: png.is_file() and png.stat().st_size > 0), "no PNG downloaded"
        assert browser.png_size(png.read_bytes()) == (1280, 720)

        # the keyboard: Tab reaches every control in order; arrows change a select, space a box
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": WINDOW[0], "height": WINDOW[1], "deviceScaleFactor": 1, "mobile": False})
        driver.get(url + "#")
        _wait(lambda: _drawn(driver))
        controls = ["y", "x", "model", "seq", "precision", "hw", "vendor", "framework",
                    "disagg", "spec", "run", "frontier", "all", "log", "labels", "reset",
                    "csv", "png"]
        reached = []
        for _ in range(40):
            ActionChains(driver).send_keys(Keys.TAB).perform()
            reached.append(driver.execute_script("return document.activeElement.id"))
            if reached[-1] == controls[-1]:
                break
        assert [c for c in reached if c in controls] == controls
        _redraw(driver, lambda: driver.find_element(By.ID, "precision").send_keys(Keys.ARROW_DOWN))
        assert _wait(lambda: "precision=fp4" in driver.current_url)
        _redraw(driver, lambda: driver.find_element(By.ID, "log").send_keys(Keys.SPACE))
        assert _wait(lambda: driver.current_url.endswith("precision=fp4&log=1"))

        # a phone: nothing wider than the screen, every control on it and big enough to use
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": PHONE[0], "height": PHONE[1], "deviceScaleFactor": 1, "mobile": True})
        driver.get(url + "#")
        driver.refresh()  # laid out anew for the phone's viewport
        assert _wait(lambda: _drawn(driver))
        widths = driver.execute_script(
            "return [innerWidth, document.documentElement.scrollWidth, document.body.scrollWidth,"
            " document.getElementById('explorer-chart').getBoundingClientRect().right]")
        assert widths[0] == PHONE[0] and max(widths) <= PHONE[0], widths
        boxes = driver.execute_script(
            "return [...document.querySelectorAll('#controls select, #controls input,"
            " #controls button')].map(e => { const r = e.getBoundingClientRect();"
            " return [e.id, r.left, r.right, r.height]; })")
        assert len(boxes) == len(controls)
        assert all(left >= 0 and right <= PHONE[0] and h >= 12 for _, left, right, h in boxes), boxes
        driver.execute_script("document.getElementById('summary').scrollIntoView()")
        _docs_screenshot(driver, DOCS_PHONE)
