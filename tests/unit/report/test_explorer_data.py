"""The explorer's data file: every point once, as columns, series shared, each series' points
together, columns packed, text escaped, and the default view."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from infersweep.report import build, costs, explorerdata, fromrun
from tests import reportruns

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("runs")
    old = fromrun.load(reportruns.write_run(tmp / "a", "100", seed=0))
    new = fromrun.load(reportruns.write_run(tmp / "b", "200", seed=1))
    return (dataclasses.replace(old, staged_at="2026-12-01T00:00:00Z"),
            dataclasses.replace(new, staged_at="2026-12-02T00:00:00Z"))


def _point(data: dict, i: int) -> dict:
    """Point ``i`` with its series' values decoded (what the page's decode() does)."""
    s = data["points"]["series"][i]
    out = {k: v[i] for k, v in data["points"].items()}
    for name, col in data["series"].items():
        out[name] = col[s] if name == "run" else col["values"][col["codes"][s]]
    return out


def test_every_point_once_in_columns_with_its_identity(runs):
    old, new = runs
    data = explorerdata.arrange([new, old], costs.load(REPO / "configs" / "gpu-costs.yaml"))
    n = len(old.points) + len(new.points)
    assert {len(v) for v in data["points"].values()} == {n}
    assert data["runs"]["id"] == ["100", "200"]  # oldest first, whatever the order given
    assert len(data["series"]["run"]) == 4  # two runs x two topologies, shared by points
    row = sorted(old.points, key=lambda p: p["conc"])[0]
    first = next(_point(data, i) for i in range(n)
                 if _point(data, i)["run"] == 0 and _point(data, i)["conc"] == row["conc"])
    assert first["config"] == reportruns.KEY and first["hw"] == row["hw"]
    assert first["cost_hw"] == "mi355x" and first["vendor"] == "amd"
    assert first["seq"] == "8k/1k" and first["kind"] == "fixed-seq-len"
    assert first["fingerprint"] == row["recipe_fingerprint"] and first["image"] == row["image"]
    assert first["topology"] == row["topology"] and first["job"] == str(row["job_id"])
    assert first["tput"] == pytest.approx(row["tput_per_gpu"], rel=1e-3)
    assert first["ttft99"] == pytest.approx(row["p99_ttft"], rel=1e-3)
    assert data["defaults"] == {"model": row["model"], "seq": "8k/1k"}
    assert data["costs"]["hardware"]["mi355x"]["usd"]["rental"]["value"] == 2.1


def test_the_script_is_short_escaped_and_reads_back(runs):
    old, _ = runs
    evil = "</script><img src=x onerror=alert(1)>&"
    run = dataclasses.replace(old, points=[{**p, "image": evil} for p in old.points])
    data = explorerdata.arrange([run], None)
    text = explorerdata.script(data)
    assert text.startswith("window.INFERSWEEP_EXPLORER_DATA = {") and "<" not in text
    assert "&" not in text and ">" not in text
    back = explorerdata.load_script(text)
    assert back["series"]["image"]["values"] == [evil]
    assert back["costs"] == {"tiers": [], "hardware": {}}
    # the columns packed: a string each (metrics at 4 significant digits), read back alike
    raw = json.loads(text[text.index("{"):].rstrip().rstrip(";"))
    assert all(isinstance(raw["points"][m], str) for m in explorerdata.METRICS
               if m != "jpt_measured") and isinstance(raw["series"]["count"], str)
    assert back["points"]["tput"] == [float(format(v, ".4g")) for v in data["points"]["tput"]]
    assert back["points"]["series"] == data["points"]["series"]
    assert back["points"]["conc"] == data["points"]["conc"]
    assert {k: v for k, v in back.items() if k != "points"} == {
        k: v for k, v in data.items() if k != "points"}


def test_each_series_points_are_together_and_agentic_results_have_their_rates(runs):
    old, new = runs
    shuffled = dataclasses.replace(new, points=new.points[::-1] + old.points)  # interleaved
    data = explorerdata.arrange([shuffled], None)
    series = data["points"]["series"]
    assert series == sorted(series) and len(series) == len(shuffled.points)
    assert set(data["points"]) == {"series", *explorerdata.CODED_COLUMNS,
                                   *explorerdata.POINT_COLUMNS}
    assert all(v is None for v in data["points"]["gpu_hit"])  # rates: agentic results only
    measured = [{**q, "joules_per_total_token": 0.5, "power_valid": i % 2 == 0}
                for i, q in enumerate(old.points)]
    data = explorerdata.arrange([dataclasses.replace(old, points=measured)], None)
    valid = sum(q["power_valid"] for q in measured)  # an invalid measurement is left out
    assert sorted(v for v in data["points"]["jpt_measured"] if v) == [0.5] * valid
    assert 0 < valid < len(measured)
    with pytest.raises(ValueError, match="not an explorer data file"):
        explorerdata.load_script("var x = 1;")


def test_sequence_labels_and_failed_points():
    assert explorerdata.seq_label(8192, 1024) == "8k/1k"
    assert explorerdata.seq_label(1000, 1000) == "1000/1000"
    assert explorerdata.seq_label(8192, 1024, 20) == "8k/1k scaled down 20x"


def test_incomplete_points_are_left_out_and_the_site_ships_the_explorer(runs, tmp_path):
    old, _ = runs
    run = dataclasses.replace(old, points=[{**old.points[0], "successful": False},
                                           *old.points[1:]])
    s = build([run], tmp_path / "site")
    assert "explorer.html" in s.pages
    site = tmp_path / "site"
    data = explorerdata.load_script((site / explorerdata.FILE).read_text())
    assert len(data["points"]["series"]) == len(old.points) - 1
    # kept apart, for the run and config pages' tables
    [row] = data["incomplete"]
    assert (row["run"], row["successful"], row["conc"], row["config"]) == (
        0, False, old.points[0]["conc"], reportruns.KEY)
    assert row["tput"] == old.points[0]["tput_per_gpu"]
    for name in ("explorer-core.js", "explorer.js"):
        assert (site / name).is_file()
    assert 'href="explorer.html"' in (site / "index.html").read_text()
