"""The explorer's logic (templates/explorer-core.js) run by node: derived metrics, frontiers,
the view in the URL fragment, the run choice and the CSV. Skips without node, unless the
browser is required (CI installs node for act)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from infersweep.report import costs, explorerdata, fromrun
from tests import browser, reportruns

REPO = Path(__file__).resolve().parents[3]
CORE = REPO / "infersweep" / "report" / "templates" / "explorer-core.js"


def _node() -> str:
    node = shutil.which("node")
    if node is None:
        if os.environ.get(browser.REQUIRE_ENV, "") not in ("", "0"):
            pytest.fail("no node to run the explorer's script tests")
        pytest.skip("no node")
    return node


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("runs")
    runs = [fromrun.load(reportruns.write_run(tmp / str(i), str(100 + i), seed=i))
            for i in range(2)]
    return explorerdata.arrange(runs, costs.load(REPO / "configs" / "gpu-costs.yaml"))


def _run(data: dict, body: str):
    """``body`` evaluated with X (the module) and D (the data); prints its JSON value."""
    script = (f"const X = require({json.dumps(str(CORE))});\n"
              f"const D = {json.dumps(data)};\n"
              f"console.log(JSON.stringify((() => {{ {body} }})()));\n")
    proc = subprocess.run([_node(), "-e", script], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_derived_metrics_follow_the_published_formulas(data):
    out = _run(data, """
      const p = X.decode(D).points[0], st = X.defaultState(D);
      const v = (m, o) => X.yValue(p, m, D.costs, o || st);
      return {tput: p.tput, cost: v("cost_hyperscaler"), tpd: v("tpd_rental"), mw: v("mw"),
              jpt: v("jpt"), own: v("cost_custom", {usd: {mi355x: 3}, kw: {}}),
              ownkw: v("jpt", {usd: {}, kw: {mi355x: 1}}), measured: p.jpt_measured};""")
    tput = out["tput"]
    assert out["cost"] == pytest.approx(1.48 / (tput * 3600 / 1e6))
    assert out["tpd"] == pytest.approx(tput * 3600 / 2.10)
    assert out["mw"] == pytest.approx(tput * 1000 / 2.65)
    if out["measured"]:
        assert out["jpt"] == pytest.approx(out["measured"])
    else:
        assert out["jpt"] == pytest.approx(2.65 * 1000 / tput)
        assert out["ownkw"] == pytest.approx(1000 / tput)
    assert out["own"] == pytest.approx(3 / (tput * 3600 / 1e6))


def test_frontier_keeps_the_undominated_points_either_way():
    pts = [[1, 10], [2, 9], [2, 5], [3, 9], [4, 1]]
    body = f"""const P = {json.dumps(pts)};
      const f = (xh, yh) => X.frontier(P, (p) => p[0], (p) => p[1], xh, yh);
      return [f(true, true), f(false, false)];"""
    up, down = _run({}, body)
    assert up == [[1, 10], [3, 9], [4, 1]]
    assert down == [[1, 10], [2, 5], [4, 1]]


def test_the_view_round_trips_through_the_fragment_and_defaults_stay_out(data):
    out = _run(data, """
      const st = Object.assign(X.defaultState(D), {y: "cost_rental", seq: "1k/1k", log: true,
                               frontier: false, usd: {mi355x: 2.5}});
      const h = X.stateHash(st, D);
      return {h: h, back: X.parseState(h, D), empty: X.stateHash(X.defaultState(D), D),
              junk: X.parseState("#y=tput&nope=1&usd.x=-3", D).usd};""")
    assert out["empty"] == ""
    assert out["h"] == "#y=cost_rental&seq=1k%2F1k&frontier=0&log=1&usd.mi355x=2.5"
    back = out["back"]
    assert (back["y"], back["seq"], back["log"], back["frontier"]) == (
        "cost_rental", "1k/1k", True, False)
    assert back["usd"] == {"mi355x": 2.5} and out["junk"] == {}


def test_newest_run_of_each_config_and_the_csv(data):
    out = _run(data, """
      const d = X.decode(D), st = X.defaultState(D);
      const newest = X.select(d, st), every = X.select(d, Object.assign({}, st, {run: "all"}));
      const one = X.select(d, Object.assign({}, st, {run: "100-1"}));
      const list = X.groups(newest, st, D.costs);
      return {newest: [...new Set(newest.map((p) => p.s.run))], every: every.length,
              one: [...new Set(one.map((p) => p.s.run))], n: newest.length,
              groups: list.map((g) => [g.name, g.points.length, g.frontier.length]),
              csv: X.csv(list, st, D.runs)};""")
    assert out["newest"] == [1] and out["one"] == [0] and out["every"] == 2 * out["n"]
    [(name, n_points, n_front)] = out["groups"]
    assert name.startswith("mi355x") and n_points == out["n"] and 0 < n_front <= n_points
    lines = out["csv"].splitlines()
    assert lines[0].startswith("group,config,model,hw,vendor") and "run_id,attempt" in lines[0]
    assert len(lines) == 1 + n_front and all(",101,1," in line for line in lines[1:])
