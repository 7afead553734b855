"""`report.build`: the pages, the charts their scripts draw, escaping, and a stable output.
(The run and config pages' charts and point tables are drawn from the explorer's data by
templates/points-core.js: tests/unit/report/test_points_js.py.)"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from infersweep.diagnostics import InputError
from infersweep.evals import thresholds
from infersweep.report import build, config_page_path, explorerdata, fromrun, run_page_path, views
from infersweep.report.output import MARKER
from tests import reportruns

REPO = Path(__file__).resolve().parents[3]
LIMITS = thresholds.load(str(REPO / "configs" / "eval-thresholds.yaml"))


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("runs")
    old = fromrun.load(reportruns.write_run(tmp / "old", "100", seed=0, evals=(0.95, 0.5)))
    new = fromrun.load(reportruns.write_run(
        tmp / "new", "200", seed=2, concs_two=(64, 128),
        changelog={"base_ref": "main", "head_ref": "topic",
                   "entries": [{"config-keys": [reportruns.KEY], "description": ["More c."],
                                "pr-link": "https://github.com/o/r/pull/7", "evals-only": False}]}))
    other = fromrun.load(reportruns.write_run(tmp / "other", "200", key="gptoss-fp4-h200-vllm",
                                              concs_one=(1, 2), concs_two=(4,)))
    new = dataclasses.replace(new, points=new.points + other.points, pr_number=7,
                              labels=("full-sweep-fail-fast",), head_sha="ab" * 20,
                              url="https://github.com/o/r/actions/runs/200",
                              staged_at="2026-12-02T00:00:00Z")
    return old, new


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}


def test_pages_and_points_per_chart(runs, tmp_path):
    old, new = runs
    s = build([new, old], tmp_path / "site", thresholds=LIMITS)
    key = reportruns.KEY
    assert s.pages == ["index.html", "explorer.html", "compare.html", "trends.html",
                       config_page_path(key),
                       config_page_path("gptoss-fp4-h200-vllm"), "runs/100-1.html",
                       "runs/200-1.html"]
    assert run_page_path(new) == "runs/200-1.html"
    assert s.points_per_chart == {
        "configs/gptoss-fp4-h200-vllm.html#chart-0": 3,
        f"configs/{key}.html#chart-0": 7 + 6,
        "runs/100-1.html#chart-0": 7,
        "runs/200-1.html#chart-0": 6,   # its configs in key order
        "runs/200-1.html#chart-1": 3}
    by = {f"{c.page}#{c.div_id}": c.traces for c in s.charts}
    assert by[f"configs/{key}.html#chart-0"] == 4  # two runs x two topologies
    site = tmp_path / "site"
    assert (site / MARKER).is_file() and (site / "plotly.min.js").stat().st_size > 1e6
    index = (site / "index.html").read_text()
    assert index.index("runs/200-1.html") < index.index("runs/100-1.html")  # newest first
    assert 'href="https://github.com/o/r/actions/runs/200"' in index


def test_the_same_runs_give_the_same_bytes_in_any_order(runs, tmp_path):
    old, new = runs
    build([old, new], tmp_path / "a", thresholds=LIMITS)
    build([new, old], tmp_path / "b", thresholds=LIMITS)
    a, b = _tree(tmp_path / "a"), _tree(tmp_path / "b")
    assert a.keys() == b.keys() and all(a[k] == b[k] for k in a)


def test_evals_are_judged_by_the_threshold_eval_check_picks(runs, tmp_path):
    old, _ = runs
    build([old], tmp_path / "site", thresholds=LIMITS)
    page = (tmp_path / "site" / config_page_path(reportruns.KEY)).read_text()
    rows = re.findall(r'<tr class="(pass|fail|unjudged)">(.*?)</tr>', page, re.S)
    assert [c for c, _ in rows] == ["pass", "fail"]
    for _, cells in rows:
        assert "0.91 (models.dsv4)" in cells  # the dsv4 prefix, not the 0.85 default
    assert ">FAIL<" in rows[1][1] and ">0.5000<" in rows[1][1]
    build([old], tmp_path / "unjudged")
    page = (tmp_path / "unjudged" / config_page_path(reportruns.KEY)).read_text()
    assert page.count('<tr class="unjudged">') == 2 and "not judged" in page


def test_the_run_page_has_provenance_and_changelog(runs, tmp_path):
    _, new = runs
    build([new], tmp_path / "site")
    page = (tmp_path / "site" / run_page_path(new)).read_text()
    for text in ("full-sweep-fail-fast", "#7", "ab" * 20, reportruns.rr.IMAGE,
                 reportruns.rr.COMMIT, reportruns.rr.REVISION, "job-200-1", "More c.",
                 'href="https://github.com/o/r/pull/7"', "main → topic", "evals-only",
                 # its points, charts and config links: drawn from the explorer's data
                 'data-run="200-1"', 'src="../explorer-data.js"', 'src="../points.js"'):
        assert text in page, text
    data = explorerdata.load_script((tmp_path / "site" / explorerdata.FILE).read_text())
    assert data["runs"]["page"] == ["runs/200-1.html"]
    assert data["config_pages"]["gptoss-fp4-h200-vllm"] == "configs/gptoss-fp4-h200-vllm.html"
    assert data["seqs"] == {"8k/1k": [8192, 1024, 1.0]}


def test_user_text_is_escaped_everywhere(runs, tmp_path):
    old, _ = runs
    evil = "<script>alert('x')</script>"
    run = dataclasses.replace(old, run_id="7" + evil, labels=(evil,), url="javascript:alert(1)",
                              changelog={"entries": [{"config-keys": [evil],
                                                      "description": [evil],
                                                      "pr-link": "javascript:x()"}]},
                              points=[{**p, "config_key": p["config_key"] + evil,
                                       "recipe_name": p["recipe_name"] + evil,
                                       "image": evil} for p in old.points],
                              evals=[{**e, "model": evil} for e in old.evals])
    s = build([run], tmp_path / "site")
    assert run_page_path(run).startswith("runs/7_script_alert__x____script_-")
    explorer = (tmp_path / "site" / "explorer.html").read_text()
    assert explorer.count("<script") == 4 and "<script>alert" not in explorer
    assert "<" not in (tmp_path / "site" / "explorer-data.js").read_text()  # escaped as \u003c
    trends = (tmp_path / "site" / "trends.html").read_text()
    assert trends.count("<script") == 6 and "<script>alert" not in trends
    assert "<" not in (tmp_path / "site" / "evals-data.js").read_text()
    compare = (tmp_path / "site" / "compare.html").read_text()
    assert compare.count("<script") == 5 and "<script>alert" not in compare
    assert "<" not in (tmp_path / "site" / "compare-data.js").read_text()
    for page in (p for p in s.pages if p not in ("explorer.html", "trends.html",
                                                 "compare.html")):
        text = (tmp_path / "site" / page).read_text()
        # only our scripts: the run and config pages' five files (data, plotly, three of ours)
        expected = 0 if page == "index.html" else 5
        assert text.count("<script") == expected and "<script>alert" not in text, page
        assert 'href="javascript:' not in text
        assert "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;" in text, page


def test_a_run_given_twice_is_refused(runs, tmp_path):
    old, _ = runs
    with pytest.raises(InputError, match="run 100 is given twice"):
        build([old, dataclasses.replace(old)], tmp_path / "site")
    assert not (tmp_path / "site").exists()


def test_file_names_are_safe_and_distinct():
    assert views.file_stem("dsv4-fp4-mi355x-atom-disagg") == "dsv4-fp4-mi355x-atom-disagg"
    a, b = views.file_stem("a/b"), views.file_stem("a_b")
    assert a != b and a.startswith("a_b-") and "/" not in a
    assert views.file_stem("..").startswith("_-") and views.file_stem("") .startswith("_")


def test_an_empty_store_gives_an_index_that_says_so(tmp_path):
    s = build([], tmp_path / "site")
    assert s.pages == ["index.html", "explorer.html", "compare.html", "trends.html"]
    assert s.charts == []
    index = (tmp_path / "site" / "index.html").read_text()
    assert "0 staged runs, 0 configs." in index and "plotly.min.js" not in index
