"""The report opened in headless Chromium: a real simulated sweep and a frozen run built by
`report build`, every chart drawn with the expected number of points (the run and config
pages draw theirs, their points' tables and their run lists from the explorer's data), nothing
fetched from the network, a screenshot of the right size; hostile text stays text."""

from __future__ import annotations

import dataclasses
import html
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from infersweep.report import build, fromrun, run_page_path
from tests import browser, reportruns
from tests.conftest import FROZEN_MASTER, FROZEN_RUNNERS
from tests.livecatalog import frozen_checkout

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[3]
KEY = reportruns.KEY


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "infersweep", *args], capture_output=True,
                          text=True, timeout=600, cwd=cwd)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """A site from two runs of the seed config: a local sweep on the simulator (5 points) and
    a frozen run with evals (7 points), both at scale-down 20 so they share a chart."""
    tmp = tmp_path_factory.mktemp("report")
    sweep = _cli("sweep", "run", "--repo", str(frozen_checkout()),
                 "--config-files", str(FROZEN_MASTER),
                 "--runner-config", str(FROZEN_RUNNERS),
                 "--config-keys", KEY, "--output", "sweep", "--scale-down", "20",
                 "--no-evals", "--conc", "4", "8", "16", "256", "512", cwd=tmp)
    assert sweep.returncode == 0, sweep.stdout[-3000:] + sweep.stderr[-3000:]
    reportruns.write_run(tmp / "frozen", "33825304569", seed=1, scale_down=20,
                         evals=(0.95, 0.5))
    out = tmp / "site"
    proc = _cli("report", "build", "--out", str(out), "--from-run", "sweep",
                "--from-run", "frozen", "--thresholds",
                str(REPO / "configs" / "eval-thresholds.yaml"), cwd=tmp)
    assert proc.returncode == 0, proc.stderr[-3000:]
    runs = [fromrun.load(tmp / "sweep"), fromrun.load(tmp / "frozen")]
    return out, runs, proc.stdout


def _facts(path: Path) -> browser.DomFacts:
    return browser.dom_facts(browser.dump_dom(path.as_uri()))


def _table_rows(dom: str) -> list[str]:
    """The body rows of the page's points tables, their cells' text joined by |."""
    out = []
    for table in re.findall(r'<table class="points">(.*?)</table>', dom, re.S):
        body = table.split("<tbody>", 1)[1]
        for row in re.findall(r"<tr[^>]*>(.*?)</tr>", body, re.S):
            out.append("|".join(html.unescape(re.sub(r"<[^>]+>", "", c))
                                for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)))
    return out


def test_every_chart_renders_its_points_offline(site):
    browser.chromium()
    out, (local, frozen), stdout = site
    assert len(local.points) == 5 and len(frozen.points) == 7
    assert f"run {frozen.run_id}: {out / 'runs' / (frozen.run_id + '-1.html')}" in stdout
    config_dom = browser.dump_dom((out / "configs" / f"{KEY}.html").as_uri())
    config = browser.dom_facts(config_dom)
    assert list(config.charts) == ["chart-0"]  # both runs at scale-down 20: one chart
    chart = config.charts["chart-0"]
    assert chart.rendered
    assert chart.points == 12
    assert chart.traces == 4 + 2  # a trace per run and topology, a frontier line per run
    assert sum("Pareto frontier" in name for name in chart.legend) == 2
    assert f"{frozen.run_id} · 2p-tp8-dpa+1d-tp8-dpa" in chart.legend
    # every point in the config's table, each with a link to its run's page; and its runs
    rows = _table_rows(config_dom)
    assert len(rows) == 12 and {r.split("|")[0] for r in rows} == {local.label, frozen.label}
    assert config_dom.count(f'href="../{run_page_path(frozen)}"') == 7 + 1 + 2  # + list, evals
    for run, n in ((local, 5), (frozen, 7)):
        dom = browser.dump_dom((out / run_page_path(run)).as_uri())
        page = browser.dom_facts(dom)
        assert {k: (c.rendered, c.points, c.traces) for k, c in page.charts.items()} == {
            "chart-0": (True, n, 3)}
        rows = _table_rows(dom)
        assert len(rows) == n and all(f"|{run.run_id}|" in r for r in rows)
        assert f'href="../configs/{KEY}.html"' in dom
    for facts in (config, _facts(out / "index.html")):
        # every script and stylesheet is a file of the site (and the browser could resolve
        # no host name at all, so the charts above were drawn from it)
        assert facts.sources and not [s for s in facts.sources if ":" in s or
                                      s.startswith("//")]
    assert (out / "plotly.min.js").stat().st_size > 1_000_000


def test_screenshot_is_a_png_of_the_window(site, tmp_path):
    browser.chromium()
    out, _runs, _ = site
    data = browser.screenshot((out / "configs" / f"{KEY}.html").as_uri(), tmp_path / "c.png")
    assert browser.png_size(data) == browser.WINDOW
    assert len(data) > 20_000  # a drawn page, not a blank one


def test_hostile_text_is_shown_as_text(tmp_path):
    browser.chromium()
    evil = '<img src=x onerror="document.title=1">'
    run = fromrun.load(reportruns.write_run(tmp_path / "run", "42", key="k" + evil,
                                            changelog={"entries": [{"config-keys": [evil],
                                                                    "description": [evil]}]}))
    run = dataclasses.replace(run, labels=(evil,), url="javascript:alert(1)")
    for p in run.points:
        p["recipe_name"] += evil
        p["topology"] += evil
    summary = build([run], tmp_path / "site")
    for page in summary.pages:
        facts = _facts(tmp_path / "site" / page)
        assert facts.elements.get("img", 0) == 0, page
        # explorer: plotly, data, its two; trends: plotly, both data files, three; compare:
        # both data files, three (no plotly); a run or config page: data, plotly, three
        scripts = {"index.html": 0, "explorer.html": 4, "trends.html": 6, "compare.html": 5}
        assert facts.elements.get("script", 0) == scripts.get(page, 5), page
        for c in facts.charts.values():
            assert c.rendered and c.points == 7
            assert any(evil in name for name in c.legend)
    text = (tmp_path / "site" / run_page_path(run)).read_text()
    assert 'href="javascript:' not in text
    assert json.dumps(evil)[1:-1] not in text.split("<script")[0]
    # the tables the run page draws show the text as it is
    rows = _table_rows(browser.dump_dom((tmp_path / "site" / run_page_path(run)).as_uri()))
    assert len(rows) == 7 and all(r.split("|")[0].endswith(evil) for r in rows)


def test_a_config_page_draws_its_newest_runs_until_asked_for_every_one(tmp_path):
    """Twelve staged runs: the config's page draws the newest ten (a frontier line each),
    lists all twelve, and draws every one once its checkbox is ticked (Selenium)."""
    from selenium.webdriver.common.by import By

    from tests.webdriver import chromium_driver, wait_for

    base = fromrun.load(reportruns.write_run(tmp_path / "run", "300", concs_one=(4,),
                                             concs_two=(64,)))
    runs = [dataclasses.replace(base, run_id=str(300 + i),
                                staged_at=f"2026-12-{i + 1:02d}T00:00:00Z",
                                points=[{**p, "run_id": str(300 + i)} for p in base.points])
            for i in range(12)]
    summary = build(runs, tmp_path / "site")
    page = tmp_path / "site" / "configs" / f"{KEY}.html"
    assert summary.points_per_chart[f"configs/{KEY}.html#chart-0"] == 10 * 2

    frontiers = ("return Array.from(document.querySelectorAll('#chart-0 .legendtext'))"
                 ".filter((t) => t.textContent.endsWith('Pareto frontier')).length")
    markers = "return document.querySelectorAll('#chart-0 .scatterlayer path.point').length"
    drawn = "return document.getElementById('points-page').dataset.drawn === 'yes'"
    with chromium_driver(tmp_path / "downloads") as driver:
        driver.get(page.as_uri())
        assert wait_for(lambda: driver.execute_script(drawn))
        links = driver.find_elements(By.CSS_SELECTOR, "#config-runs a")
        assert [a.text for a in links] == [str(311 - i) for i in range(12)]  # newest first
        rows = driver.find_elements(By.CSS_SELECTOR, "#config-points tbody tr")
        assert len(rows) == 10 * 2 and rows[0].text.startswith("302")  # the oldest shown
        assert (driver.execute_script(frontiers), driver.execute_script(markers)) == (10, 20)
        box = driver.find_element(By.ID, "all-runs")
        assert box.is_displayed()
        box.click()
        assert wait_for(lambda: driver.execute_script(drawn))
        assert len(driver.find_elements(By.CSS_SELECTOR, "#config-points tbody tr")) == 12 * 2
        assert (driver.execute_script(frontiers), driver.execute_script(markers)) == (12, 24)
