"""The run and config pages' logic (templates/points-core.js) run by node over the explorer's
packed data: the rows of a run and of a config with what their tables show, the charts with
one frontier per run, valid plotly traces, hostile text escaped. Skips without node, unless the
browser is required (CI installs node for act)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import plotly.graph_objects as go
import pytest

from infersweep.report import explorerdata, fromrun
from tests import nodejs, reportruns

REPO = Path(__file__).resolve().parents[3]
TEMPLATES = REPO / "infersweep" / "report" / "templates"


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("runs")
    old = fromrun.load(reportruns.write_run(tmp / "old", "100", seed=0))
    new = fromrun.load(reportruns.write_run(tmp / "new", "200", seed=2, concs_two=(64, 128)))
    other = fromrun.load(reportruns.write_run(tmp / "other", "200", key="gptoss-fp4-h200-vllm",
                                              concs_one=(1, 2), concs_two=(4,)))
    failed = {**other.points[0], "successful": False, "conc": 3}
    no_seq = {**other.points[0], "isl": None, "conc": 5}  # listed, not plotted
    new = dataclasses.replace(new, points=new.points + other.points + [failed, no_seq],
                              staged_at="2026-12-02T00:00:00Z")
    return dataclasses.replace(old, staged_at="2026-12-01T00:00:00Z"), new


def _packed(runs) -> dict:
    return json.loads(explorerdata.script(explorerdata.arrange(list(runs), None))
                      .split(" = ", 1)[1].rstrip().rstrip(";"))


def _run(data: dict, body: str):
    """``body`` evaluated with X (explorer-core), P (points-core), D (the packed data) and
    d (it decoded); prints its JSON value."""
    return nodejs.evaluate(
        f"globalThis.InfersweepExplorer = require({json.dumps(str(TEMPLATES / 'explorer-core.js'))});\n"
        f"const X = globalThis.InfersweepExplorer;\n"
        f"const P = require({json.dumps(str(TEMPLATES / 'points-core.js'))});\n"
        f"const D = {json.dumps(data)};\nconst d = X.decode(D);", body)


def test_a_run_page_has_every_point_of_the_run_with_its_table_cells(runs):
    old, new = runs
    out = _run(_packed(runs), """
      const run = P.runIndex(d, "200-1"), rows = P.rows(d, D, {run: run});
      return {run: run, missing: P.runIndex(d, "999-1"), configs: rows.map((r) => r.config),
              cells: rows.map((r) => P.COLUMNS.map((c) => c.cell(r, d.runs))),
              heads: P.COLUMNS.map((c) => c.head), failed: rows.filter((r) => !r.successful).length,
              charts: P.charts(rows.filter((r) => r.config === "gptoss-fp4-h200-vllm"))
                .map((c) => c.points)};""")
    assert out["run"] == 1 and out["missing"] == -1
    assert len(out["configs"]) == len(new.points) and out["failed"] == 1
    assert out["configs"] == sorted(out["configs"])  # grouped by config, in key order
    assert out["charts"] == [3]  # of its 5 rows: one failed, one without an ISL
    head = out["heads"]
    row = dict(zip(head, next(c for c in out["cells"] if c[head.index("conc")] == "4"
                              and reportruns.ONE in c[0]), strict=True))
    point = next(p for p in new.points if p["conc"] == 4 and p["recipe_name"] == reportruns.ONE)
    # latencies are kept in seconds and shown in ms: TTFT 150 ms, TPOT 1 / interactivity;
    # numbers at the data's 4 significant digits
    assert (row["TTFT median (ms)"], row["TPOT median (ms)"]) == ("150", "10")
    for column, field in (("tok/s/GPU", "tput_per_gpu"), ("tok/s/user (p99)", "p99_intvty")):
        assert float(row[column].replace(",", "")) == float(format(point[field], ".4g"))
    assert any("," in c[head.index("tok/s/GPU")] for c in out["cells"])  # 1,000s separated
    assert row["completed"] == f"{point['completed']}/{point['num_prompts']}"
    assert (row["image"], row["srt-slurm commit"], row["engine revision"]) == (
        reportruns.rr.IMAGE, reportruns.rr.COMMIT, reportruns.rr.REVISION)
    assert (row["job id"], row["run id"], row["attempt"], row["ISL"], row["OSL"]) == (
        str(point["job_id"]), "200", "1", "8192", "1024")
    assert row["successful"] == "yes" and any(c[head.index("successful")] == "no"
                                              for c in out["cells"])


def test_a_config_page_has_each_runs_points_and_a_frontier_per_run(runs):
    old, new = runs
    out = _run(_packed(runs), """
      const key = KEY, rows = P.rows(d, D, {config: key});
      const only = P.rows(d, D, {config: key, runs: new Set([1])});
      const charts = P.charts(rows);
      return {n: rows.length, runs: P.configRuns(d, D, key), only: only.length,
              order: rows.map((r) => r.run), charts: charts.map((c) => [c.title, c.points]),
              traces: P.traces(charts[0], d.runs)};""".replace("KEY", json.dumps(reportruns.KEY)))
    key_points = [p for p in new.points if p["config_key"] == reportruns.KEY]
    assert out["n"] == len(old.points) + len(key_points) and out["runs"] == [0, 1]
    assert out["only"] == len(key_points) and out["order"] == sorted(out["order"])
    assert out["charts"] == [["ISL 8192 / OSL 1024", 7 + 6]]
    fig = {"data": out["traces"], "layout": {}}
    go.Figure(fig)  # raises on anything plotly.js would not understand
    markers = [t for t in fig["data"] if t["mode"] == "markers"]
    lines = [t for t in fig["data"] if t["mode"] == "lines"]
    assert len(markers) == 4  # two runs x two topologies
    assert [t["name"] for t in lines] == ["100 · Pareto frontier", "200 · Pareto frontier"]
    assert lines[0]["x"] == sorted(lines[0]["x"])
    # 2P1D beats 1P1D at every interactivity it reaches, and reaches further
    assert lines[0]["y"] == sorted((float(format(p["tput_per_gpu"], ".4g")) for p in old.points
                                    if p["recipe_name"] == reportruns.TWO), reverse=True)
    assert markers[0]["marker"]["color"] == markers[1]["marker"]["color"] != \
        markers[2]["marker"]["color"]
    assert markers[0]["marker"]["symbol"] != markers[1]["marker"]["symbol"]
    assert "job " in markers[0]["text"][0] and "conc " in markers[0]["text"][0]


def test_text_plotly_shows_is_escaped(runs):
    old, _ = runs
    evil = "<img src=x onerror=alert(1)>&"
    run = dataclasses.replace(old, points=[{**p, "recipe_name": p["recipe_name"] + evil,
                                            "topology": p["topology"] + evil}
                                           for p in old.points])
    out = _run(_packed([run]), """
      const c = P.charts(P.rows(d, D, {run: 0}))[0], t = P.traces(c, d.runs);
      return {names: t.map((x) => x.name), text: t[0].text[0], cell: P.rows(d, D, {run: 0})[0].recipe};""")
    assert out["cell"].endswith(evil)  # the table sets text, not HTML
    assert all("<img" not in n and "&lt;img" in n for n in out["names"][:2])
    assert "<img" not in out["text"] and "&lt;img src=x onerror=alert(1)&gt;&amp;" in out["text"]


def test_frontiers_keep_the_undominated_points_the_first_of_ties_and_no_incomplete_one(
        runs):
    rows = [{"run": 0, "recipe": "r", "topology": t, "isl": 8192, "osl": 1024,
             "scale_down": 1, "conc": c, "attempt": 1, "successful": ok, "intvty": x,
             "tput": y, "n": n}
            for n, (t, c, x, y, ok) in enumerate([
                ("a", 1, 10, 100, True), ("a", 2, 20, 90, True), ("b", 3, 15, 80, True),
                ("b", 4, 30, 40, True), ("a", 5, 5, 100, True), ("b", 6, 30, 10, True),
                ("a", 7, 10, 100, True), ("b", 8, 100, 100, False),
                ("b", 9, None, 500, True), ("b", 10, 50, 50, True)])]
    rows[-1]["isl"] = None  # no ISL: listed, never plotted
    out = _run(_packed(runs), f"""const c = P.charts({json.dumps(rows)});
      return c.map((x) => [x.points, x.frontiers.map((f) => f.points.map((r) => r.n))]);""")
    # 10/100 beats 5/100 (same y, less x); of the two 10/100 the first is kept; 15/80 and
    # 30/10 are beaten; the failed, the one without interactivity and without ISL never count
    assert out == [[7, [[0, 1, 3]]]]
