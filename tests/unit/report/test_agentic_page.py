"""The agentic page: per config, throughput per GPU against interactivity with a series per
run and KV-offload mode, cache hit rates per concurrency, a table under each chart, local
results labelled, linked from the index; escaped and the same bytes in any order."""

from __future__ import annotations

import copy
import json
import re

import pytest

from infersweep.report import build
from infersweep.store.model import StagedRun
from tests.unit.store import agentic_data as ad


@pytest.fixture(scope="module")
def entries(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("agentic")
    ad.publishable_job(tmp / "none")
    ad.local_job(tmp / "dram", **ad.OFFLOAD)
    found = ad.entries(tmp / "none", tmp / "dram")
    c4 = copy.deepcopy(found[1])  # the full run at a second concurrency
    c4["result"]["conc"], c4["name"] = 4, "dsv4-c4"
    return [*found, c4]


def _run(entries, run_id="300"):
    return StagedRun(run_id=run_id, attempt=1, source="github",
                     staged_at="2026-12-03T00:00:00Z", agentic=entries)


def _figures(page: str) -> list[dict]:
    return [json.loads(m) for m in re.findall(
        r'Plotly\.newPlot\(\s*"chart-\d+",\s*(\[.*?\]),\s*\{', page, re.S)]


def test_the_page_holds_every_point_per_offload_mode(entries, tmp_path):
    summary = build([_run(entries)], tmp_path / "site")
    assert "agentic.html" in summary.pages
    page = (tmp_path / "site" / "agentic.html").read_text()
    charts = [c for c in summary.charts if c.page == "agentic.html"]
    assert [c.div_id for c in charts] == ["chart-0", "chart-1"]
    assert charts[0].points == 3 and charts[0].traces == 2   # none (c=2, 4), dram (c=2)
    assert charts[1].points == 9 and charts[1].traces == 6   # 3 rates x (3 points)
    traces = _figures(page)[0]
    by_name = {t["name"]: t for t in traces}
    assert set(by_name) == {"300 · KV offload none",
                            "300 · KV offload dram/lmcache (local, not publishable)"}
    full = by_name["300 · KV offload none"]
    per_gpu = [e["result"]["request_metrics"]["throughput"]["per_gpu"]["total_tput_tps"]
               for e in entries[1:]]
    assert full["y"] == per_gpu and len(full["x"]) == 2
    assert by_name["300 · KV offload dram/lmcache (local, not publishable)"]["marker"][
        "symbol"].endswith("-open")
    # a table under each chart, a row per point; the local one labelled and shaded
    tables = re.findall(r'<table class="points agentic-(\w+)">(.*?)</table>', page, re.S)
    assert [t for t, _ in tables] == ["throughput", "cache"]
    for _, body in tables:
        assert body.count("<tr") == 4  # header + 3 points
        assert body.count('<tr class="local">') == 1
    assert "1 of 3 results of this config: local, not publishable" in page
    index = (tmp_path / "site" / "index.html").read_text()
    assert 'href="agentic.html#dsv4-fp4-b200-dgxc-vllm"' in index
    assert 'href="explorer.html#model=&amp;seq=agentic"' in index  # the explorer's view


def test_no_agentic_results_no_page(tmp_path):
    summary = build([_run([])], tmp_path / "site")
    assert "agentic.html" not in summary.pages
    assert "agentic.html" not in (tmp_path / "site" / "index.html").read_text()


def test_text_is_escaped_and_the_bytes_do_not_depend_on_order(entries, tmp_path):
    evil = copy.deepcopy(entries)
    for e in evil:
        e["config_key"] = "<script>alert(1)</script>"
    runs = [_run(evil, "300"), _run(entries, "301")]
    build(runs, tmp_path / "a")
    build(list(reversed(runs)), tmp_path / "b")
    a = (tmp_path / "a" / "agentic.html").read_text()
    assert "<script>alert(1)</script>" not in a
    assert a == (tmp_path / "b" / "agentic.html").read_text()
