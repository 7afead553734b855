"""The trends, calculator and evals page driven in the system Chromium by Selenium: a target
interactivity typed (in range and out of it), the metric changed, two configs picked for the
ratio, the calculator's CSV and PNG exported, the evals view with its threshold line and its
failing eval marked as failing in text, and the view kept in the URL fragment across a
reload, back and forward. Screenshots of the three views go to docs/img/ when
INFERSWEEP_TEST_DOCS_SCREENSHOTS=1."""

from __future__ import annotations

import csv
import os
from pathlib import Path
from urllib.parse import unquote_plus

import pytest

from infersweep.evals import thresholds
from infersweep.report import build, costs
from tests import browser, reportruns
from tests.webdriver import WINDOW, chromium_driver, wait_for

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[3]
FP4 = "mi355x-disagg · atom-disagg · fp4 · none"
FP8 = "mi355x-disagg · atom-disagg · fp8 · none"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("trends")
    runs = reportruns.runs_with_evals(tmp)
    build(runs, tmp / "site", costs=costs.load(REPO / "configs" / "gpu-costs.yaml"),
          thresholds=thresholds.load(str(REPO / "configs" / "eval-thresholds.yaml")))
    return tmp / "site", runs


def _drawn(driver, view: str) -> str | None:
    """The number of values the chart shows, as text ("0" is drawn too), once it is drawn."""
    return driver.execute_script(
        "const c = document.getElementById('chart');"
        "return c.dataset.rendered === 'yes' && c.dataset.view === arguments[0]"
        " ? c.dataset.values : null;", view)


def _redraw(driver, view: str, action) -> int:
    driver.execute_script("delete document.getElementById('chart').dataset.rendered")
    action()
    n = wait_for(lambda: _drawn(driver, view))
    assert n is not None, f"the {view} view was not drawn"
    return int(n)


def _traces(driver) -> list[dict]:
    return driver.execute_script(
        "return document.getElementById('chart').data.map(t => ({name: t.name, x: t.x,"
        " y: t.y, text: t.text}))")


def _table(driver) -> list[tuple[str, list[str]]]:
    return driver.execute_script(
        "return [...document.querySelectorAll('#table tbody tr')].map(r => [r.className,"
        " [...r.cells].map(c => c.textContent)])")


def _fragment(driver) -> str:
    return unquote_plus(driver.current_url.split("#", 1)[1]) if "#" in driver.current_url else ""


def _shot(driver, name: str, tmp: Path) -> None:
    """The view from its summary line down (the chart whole, the table's head) at WINDOW."""
    driver.execute_script("document.getElementById('summary').scrollIntoView()")
    png = tmp / f"screenshot-{name}.png"
    driver.save_screenshot(str(png))
    assert browser.png_size(png.read_bytes()) == WINDOW
    if os.environ.get("INFERSWEEP_TEST_DOCS_SCREENSHOTS", "") not in ("", "0"):
        (REPO / "docs" / "img" / f"{name}.png").write_bytes(png.read_bytes())


def test_trends_calculator_and_evals_by_their_controls(site, tmp_path):
    out, runs = site
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select

    with chromium_driver(tmp_path) as driver:
        driver.get((out / "trends.html").as_uri())
        # the default view: trends of both config groups over both runs, newest model's 8k/1k
        assert wait_for(lambda: _drawn(driver, "trends")) == "4"
        assert driver.find_element(By.ID, "tab-trends").get_attribute("aria-selected") == "true"
        assert sorted(t["name"] for t in _traces(driver)) == [FP4, FP8]
        assert all(t["x"] == ["2026-12-01", "2026-12-02"] for t in _traces(driver))
        _shot(driver, "trends", tmp_path)

        def type_target(value: str):
            # typed over the old value (clear() would fire a change of its own)
            driver.find_element(By.ID, "target").send_keys(Keys.CONTROL, "a", Keys.NULL, value,
                                                            Keys.TAB)

        # a target no frontier reaches: nothing drawn, every row says so
        assert _redraw(driver, "trends", lambda: type_target("500")) == 0
        rows = _table(driver)
        assert len(rows) == 4 and all(c == "out" and "out of range (frontier" in cells[3]
                                      for c, cells in rows)
        # a target inside every frontier: a value per run and group
        assert _redraw(driver, "trends", lambda: type_target("80")) == 4
        assert _fragment(driver) == "target=80"
        fp4_at_80 = next(t["y"] for t in _traces(driver) if t["name"] == FP4)
        assert all(y > 0 for y in fp4_at_80)

        # the metric: cost per million tokens at the rental tier, recomputed
        _redraw(driver, "trends", lambda: Select(driver.find_element(By.ID, "y"))
                .select_by_value("cost_rental"))
        assert _fragment(driver) == "y=cost_rental&target=80"
        cost = next(t["y"] for t in _traces(driver) if t["name"] == FP4)
        rental = 2.10  # mi355x's rental $/GPU-hr in configs/gpu-costs.yaml
        for c, tput in zip(cost, fp4_at_80, strict=True):
            # the cost frontier's own reading: near the cost of the throughput read at the
            # same target (two monotone curves through reciprocal points, not one)
            assert c == pytest.approx(rental / (tput * 3600 / 1e6), rel=0.05)

        # the calculator: a bar per group, two picked, their ratio
        assert _redraw(driver, "calculator", lambda: driver.find_element(
            By.ID, "tab-calculator").click()) == 2
        Select(driver.find_element(By.ID, "a")).select_by_value(FP4)
        _redraw(driver, "calculator",
                lambda: Select(driver.find_element(By.ID, "b")).select_by_value(FP8))
        assert _fragment(driver) == f"y=cost_rental&view=calculator&target=80&a={FP4}&b={FP8}"
        bars = dict(zip(*[_traces(driver)[0][k] for k in ("x", "y")], strict=True))
        ratio = driver.find_element(By.ID, "ratio").text
        assert ratio.startswith(f"A ÷ B = {bars[FP4] / bars[FP8]:.2f}×")
        assert bars[FP4] / bars[FP8] == pytest.approx(0.8, rel=2e-3)  # fp8's throughput is 0.8x
        _shot(driver, "calculator", tmp_path)

        driver.find_element(By.ID, "csv").click()
        path = tmp_path / "calculator.csv"
        assert wait_for(lambda: path.is_file() and path.stat().st_size > 0), "no CSV"
        lines = list(csv.DictReader(path.open()))
        assert [r["group"] for r in lines] == [FP4, FP8]
        assert all(r["status"] == "ok" and r["target_intvty"] == "80" and r["run_ids"] ==
                   f"{runs[1].run_id}-1" and r["images"] and r["fingerprints"] for r in lines)
        driver.find_element(By.ID, "png").click()
        png = tmp_path / "calculator.png"
        assert wait_for(lambda: png.is_file() and png.stat().st_size > 0), "no PNG"
        assert browser.png_size(png.read_bytes()) == (1280, 720)

        # evals: the newest run's two, the threshold line, the failing one failing in text
        assert _redraw(driver, "evals", lambda: driver.find_element(
            By.ID, "tab-evals").click()) == 2
        traces = {t["name"]: t for t in _traces(driver)}
        assert traces["threshold"]["y"] == [0.91, 0.91]
        fail = traces["fails its threshold"]
        assert fail["x"] == [reportruns.KEY] and fail["text"] == ["FAIL"]
        drawn = driver.execute_script(
            "return [...document.querySelectorAll('#chart .textpoint')].map(t => t.textContent)")
        assert "FAIL" in drawn
        rows = {cells[0]: (cls, cells[-1]) for cls, cells in _table(driver)}
        assert rows == {reportruns.KEY: ("fail", "FAIL: below 0.91"),
                        reportruns.FP8_KEY: ("pass", "pass")}
        assert "1 failing" in driver.find_element(By.ID, "summary").text
        _shot(driver, "evals", tmp_path)

        # the URL is the view: a reload opens it; back and forward step through the views
        view = _fragment(driver)
        assert view == f"y=cost_rental&view=evals&target=80&a={FP4}&b={FP8}"
        driver.refresh()
        assert wait_for(lambda: _drawn(driver, "evals")) == "2"
        assert driver.find_element(By.ID, "tab-evals").get_attribute("aria-selected") == "true"
        driver.back()
        assert wait_for(lambda: _drawn(driver, "calculator")) == "2"
        assert Select(driver.find_element(By.ID, "b")).first_selected_option.get_attribute(
            "value") == FP8
        assert driver.find_element(By.ID, "target").get_attribute("value") == "80"
        driver.forward()
        assert wait_for(lambda: _drawn(driver, "evals")) == "2"
        assert _fragment(driver) == view
