"""`report build --db`: the report of runs staged into a real store (SQLite and PostgreSQL)
is the report of the same run folders, and its charts draw in Chromium."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from infersweep.report import build, fromrun
from infersweep.store import open_store
from tests import browser, reportruns

pytestmark = pytest.mark.integration


REPO = Path(__file__).resolve().parents[3]


def _cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "infersweep", *map(str, args)],
                          capture_output=True, text=True, timeout=300, cwd=REPO)


def _ingest_ungated(folder: Path, store_url: str) -> None:
    """The run into the store as ingest writes it, without the eval gate: these eval folders
    are stand-ins for the report (one fails on purpose, to show as failing); the gate that
    keeps them out of a real store is tested in tests/integration/store."""
    from infersweep.store import RunInfo, read_run_dir

    d = read_run_dir(folder)
    with open_store(store_url) as s:
        if s.revision is None:
            s.migrate()
        s.ingest(RunInfo(run_id=d.run_id, attempt=d.attempt, source="local",
                         created_at=d.started, changelog=d.changelog), d.points, d.evals,
                 d.agentic)


def test_the_store_report_is_the_report_of_the_run_folders(store_url, tmp_path):
    folders = [reportruns.write_run(tmp_path / "a", "33825304569", seed=1, evals=(0.95, 0.5),
                                    changelog={"entries": [{"config-keys": [reportruns.KEY],
                                                            "description": ["c <b>"]}]}),
               reportruns.write_run(tmp_path / "b", "33825309999", seed=2, concs_two=(64,))]
    _ingest_ungated(folders[0], store_url)
    proc = _cli("store", "ingest", folders[1], "--db", store_url)  # no evals: the CLI's way
    assert proc.returncode == 0, proc.stderr[-3000:]
    _ingest_ungated(folders[0], store_url)  # staged again: one copy
    out = tmp_path / "site"
    proc = _cli("report", "build", "--out", out, "--db", store_url)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.splitlines()[0] == (
        f"7 page(s), 3 chart(s), {2 * (7 + 5)} plotted point(s) from 2 run(s): "
        f"{out / 'index.html'}")
    run_page = out / "runs" / "33825304569-1.html"
    assert f"run 33825304569: {run_page}" in proc.stdout
    text = run_page.read_text()
    assert "c &lt;b&gt;" in text
    # judged by configs/eval-thresholds.yaml of the working folder (the checkout)
    assert '<tr class="pass">' in text and '<tr class="fail">' in text

    with open_store(store_url) as s:
        stored = s.staged_runs()
    direct = [fromrun.load(f) for f in folders]
    a = build(stored, tmp_path / "from-store")
    b = build(direct, tmp_path / "from-folders")
    assert a.pages == b.pages and a.points_per_chart == b.points_per_chart
    assert {c.traces for c in a.charts} == {c.traces for c in b.charts}

    browser.chromium()
    config = browser.dom_facts(browser.dump_dom((out / "configs" / f"{reportruns.KEY}.html")
                                                .as_uri()))
    assert {k: (c.rendered, c.points, c.traces) for k, c in config.charts.items()} == {
        "chart-0": (True, 12, 6)}
