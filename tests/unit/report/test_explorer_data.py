"""The explorer's data file: every point once, as column arrays, series shared, numbers short,
text escaped, and the default view."""

from __future__ import annotations

import dataclasses
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
    assert all(len(str(v)) <= 10 for v in back["points"]["tput"])  # 4 significant digits
    assert explorerdata._number(1234.5678) == "1235" and explorerdata._number(None) == "null"
    assert explorerdata._number(0.000123456) == "0.0001235"


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
    for name in ("explorer-core.js", "explorer.js"):
        assert (site / name).is_file()
    assert 'href="explorer.html"' in (site / "index.html").read_text()
