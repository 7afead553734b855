"""The explorer's logic (templates/explorer-core.js) run by node: derived metrics, frontiers,
the view in the URL fragment, the run choice and the CSV. Skips without node, unless the
browser is required (CI installs node for act)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from infersweep.report import costs, explorerdata, fromrun
from infersweep.results.agenticagg import offload_mode
from tests import nodejs, reportruns

REPO = Path(__file__).resolve().parents[3]
CORE = REPO / "infersweep" / "report" / "templates" / "explorer-core.js"


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("runs")
    runs = [fromrun.load(reportruns.write_run(tmp / str(i), str(100 + i), seed=i))
            for i in range(2)]
    return explorerdata.arrange(runs, costs.load(REPO / "configs" / "gpu-costs.yaml"))


def _run(data: dict, body: str):
    """``body`` evaluated with X (the module) and D (the data); prints its JSON value."""
    return nodejs.evaluate(f"const X = require({json.dumps(str(CORE))});\n"
                           f"const D = {json.dumps(data)};", body)


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


def test_the_packed_file_decodes_to_the_same_points_as_the_plain_data(data):
    """What the page reads (explorerdata.script's packed columns) against arrange's lists."""
    packed = explorerdata.pack(data)
    body = """
      const plain = X.decode(D.plain), packed = X.decode(D.packed);
      const view = (d) => d.points.map((p) => Object.assign({}, p, { s: p.s.index }));
      const st = X.defaultState(D.plain);
      return {plain: view(plain), packed: view(packed), series: packed.series,
              shown: X.select(packed, st).map((p) => p.index).sort((a, b) => a - b),
              shownPlain: X.select(plain, st).map((p) => p.index).sort((a, b) => a - b)};"""
    out = _run({"plain": data, "packed": packed}, body)
    assert len(out["packed"]) == len(data["points"]["series"]) > 0
    for a, b in zip(out["plain"], out["packed"], strict=True):
        assert a.keys() == b.keys() and a["conc"] == b["conc"] and a["s"] == b["s"]
        for m in explorerdata.POINT_COLUMNS:
            assert b[m] == (None if a[m] is None else float(format(a[m], ".4g")))
    first = out["series"][0]
    assert first["config"] == reportruns.KEY and first["seq"] == "8k/1k"
    assert out["shown"] == out["shownPlain"] and out["shown"]


def test_the_agentic_view_has_a_frontier_per_offload_mode_and_the_hit_rates(tmp_path):
    from infersweep.store.model import StagedRun
    from tests.unit.store import agentic_data as ad

    ad.publishable_job(tmp_path / "none")
    ad.local_job(tmp_path / "dram", **ad.OFFLOAD)
    run = StagedRun(run_id="300", attempt=1, source="github", staged_at="2026-12-03T00:00:00Z",
                    agentic=ad.entries(tmp_path / "none", tmp_path / "dram"))
    data = explorerdata.pack(explorerdata.arrange([run], None))
    out = _run(data, """
      const d = X.decode(D), st = Object.assign(X.defaultState(D), {model: "", seq: X.AGENTIC});
      const pts = X.select(d, st), list = X.groups(pts, st, D.costs), hits = X.hitRates(pts);
      return {groups: list.map((g) => g.name), local: pts.map((p) => p.s.local).sort(),
              hits: hits.map((h) => [h.s.topology, h.key, h.points.length, h.local]),
              csv: X.csv(list, st, D.runs).split("\\n")[0], hitsCsv: X.hitsCsv(hits, D.runs),
              fixed: X.groups(pts, Object.assign({}, st, {seq: ""}), D.costs).length};""")
    assert sorted(n.rsplit(" · ", 1)[1] for n in out["groups"]) == [
        "KV offload dram/lmcache", "KV offload none"]
    assert out["fixed"] == 1  # outside the agentic view a group spans the offload modes
    assert out["local"] == ["", "yes"]
    assert {(t, k) for t, k, _, _ in out["hits"]} == {
        (f"KV offload {m}", k) for m in ("none", "dram/lmcache")
        for k in ("gpu_hit", "cpu_hit", "theory_hit")}
    assert all(local == (t == "KV offload dram/lmcache") for t, _, _, local in out["hits"])
    assert out["csv"].endswith(",on_frontier,local,gpu_hit,cpu_hit,theory_hit,kv_usage")
    rows = list(csv.DictReader(io.StringIO(out["hitsCsv"])))
    assert len(rows) == 2 and list(rows[0])[-5:] == ["local", "gpu_hit", "cpu_hit",
                                                     "theory_hit", "kv_usage"]
    for e in run.agentic:
        r = e["result"]
        [row] = [row for row in rows if row["topology"].endswith(offload_mode(r))]
        assert float(row["gpu_hit"]) == pytest.approx(
            r["server_metrics"]["server_gpu_cache_hit_rate"], rel=1e-3)
        assert row["local"] == ("yes" if row["topology"] != "KV offload none" else "no")
