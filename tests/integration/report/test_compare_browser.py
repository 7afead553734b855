"""The compare page driven in the system Chromium through Selenium and Debian's chromedriver,
over four staged runs (tests/compareruns.py): the default comparison of the newest two runs
lists every point's change with the regression marked in words, the added and removed points,
the changelog entry between them and the recipe diff; two other runs picked by the real
controls; the view kept in the URL fragment across a reload, back and forward; the CSV
exported and read; a screenshot (docs/img/compare.png when
INFERSWEEP_TEST_DOCS_SCREENSHOTS=1)."""

from __future__ import annotations

import csv
import os
from pathlib import Path

import pytest

from infersweep.report import build, costs
from tests import browser, compareruns, reportruns
from tests.integration.report.test_explorer_browser import WINDOW, _driver, _wait

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[3]
DOCS_IMAGE = REPO / "docs" / "img" / "compare.png"
SLOW_KEY = "\n".join([reportruns.KEY, "1p-tp8+1d-tp8", "8k/1k", "4"])


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("compare")
    runs = compareruns.write(tmp / "runs")
    build(runs, tmp / "site", costs=costs.load(REPO / "configs" / "gpu-costs.yaml"))
    return tmp / "site"


def _shown(driver, state: str) -> bool:
    return driver.execute_script("return document.body.dataset.compared") == state


def _text(driver, element_id: str) -> str:
    return driver.execute_script(f"return document.getElementById('{element_id}').innerText")


def test_two_runs_compared_point_by_point_with_changelog_and_recipe_diff(site, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    with _driver(tmp_path) as driver:
        driver.get((site / "compare.html").as_uri())
        assert _wait(lambda: _shown(driver, "103-1 104-1")), "the compare view was not drawn"

        # every matched point's change; the slower one marked in words, not colour only
        rows = driver.find_elements(By.CSS_SELECTOR, "#changes tbody tr")
        assert len(rows) == 6
        slow = next(r for r in rows if r.get_attribute("data-key") == SLOW_KEY)
        assert "reg" in slow.get_attribute("class").split()
        cells = slow.find_elements(By.TAG_NAME, "td")
        assert cells[0].text == "▼ regression"
        assert "noise ±" in cells[6].text and "(n=3)" in cells[6].text
        assert "▼ regression" in cells[6].text and "−" in cells[6].text
        assert "(changed)" in cells[5].text
        others = [r for r in rows if r is not slow]
        assert all(r.find_elements(By.TAG_NAME, "td")[0].text == "within noise or threshold"
                   for r in others)

        unmatched = _text(driver, "unmatched")
        assert "removed\t" + reportruns.KEY in unmatched and "\t32\t" in unmatched
        assert "added\t" + reportruns.KEY in unmatched and "\t512\t" in unmatched

        entries = driver.find_elements(By.CSS_SELECTOR, "#changelog .entry")
        assert [e.find_element(By.TAG_NAME, "li").text for e in entries] == [
            "Mooncake over TCP for 1P1D."]
        assert "https://github.com/o/r/pull/9" in entries[0].text

        diff = driver.find_element(By.CSS_SELECTOR, "#recipes .recipe-change pre").text
        assert "--- 103/" + reportruns.ONE in diff
        assert "max-num-seqs: 128 -> 256" in diff
        assert f"model.container: {compareruns.IMAGE} -> {compareruns.NEW_IMAGE}" in diff
        assert "job folder" not in diff and "2 differences" in diff

        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": WINDOW[0], "height": WINDOW[1], "deviceScaleFactor": 1, "mobile": False})
        if os.environ.get("INFERSWEEP_TEST_DOCS_SCREENSHOTS", "") not in ("", "0"):
            DOCS_IMAGE.parent.mkdir(parents=True, exist_ok=True)
            driver.save_screenshot(str(DOCS_IMAGE))
        png = tmp_path / "compare.png"
        driver.save_screenshot(str(png))
        assert browser.png_size(png.read_bytes()) == WINDOW

        # two other runs, by the real controls: the changelog and recipes follow
        Select(driver.find_element(By.ID, "base")).select_by_value("101-1")
        assert _wait(lambda: _shown(driver, "101-1 104-1"))
        Select(driver.find_element(By.ID, "new")).select_by_value("102-1")
        assert _wait(lambda: _shown(driver, "101-1 102-1"))
        assert driver.current_url.split("#", 1)[1] == "base=101-1&new=102-1"
        assert [e.find_element(By.TAG_NAME, "li").text for e in driver.find_elements(
            By.CSS_SELECTOR, "#changelog .entry")] == ["Bump the ATOM image."]
        assert driver.find_elements(By.CSS_SELECTOR, "#recipes .recipe-change") == []
        assert "threshold 5 % (n=2)" in _text(driver, "changes")

        # a reload (a shared link) opens the same view; back and forward walk the views
        driver.refresh()
        assert _wait(lambda: _shown(driver, "101-1 102-1"))
        assert Select(driver.find_element(By.ID, "new")).first_selected_option \
            .get_attribute("value") == "102-1"
        driver.back()
        assert _wait(lambda: _shown(driver, "101-1 104-1"))
        assert Select(driver.find_element(By.ID, "new")).first_selected_option \
            .get_attribute("value") == "104-1"
        driver.forward()
        assert _wait(lambda: _shown(driver, "101-1 102-1"))

        # a date as a side, and swapping the two
        Select(driver.find_element(By.ID, "base")).select_by_value("date:2026-12-04")
        assert _wait(lambda: _shown(driver, "date:2026-12-04 102-1"))
        driver.find_element(By.ID, "swap").click()
        assert _wait(lambda: _shown(driver, "102-1 date:2026-12-04"))
        assert len(driver.find_elements(By.CSS_SELECTOR, "#changes tbody tr")) == 7

        # the CSV: a line per point, matched (7) or not (512 added), with both runs
        driver.find_element(By.ID, "csv").click()
        path = tmp_path / "compare.csv"
        assert _wait(lambda: path.is_file() and path.stat().st_size > 0), "no CSV downloaded"
        rows = list(csv.DictReader(path.open()))
        assert len(rows) == 8
        assert [r["status"] for r in rows].count("added") == 1
        assert {r["base_run_id"] for r in rows if r["status"] != "added"} == {"102"}
        assert {r["new_run_id"] for r in rows} == {"103", "104"}  # the newest up to the 4th
        assert any(r["tput_verdict"] == "regression" for r in rows)
