"""`infersweep report build` from run folders (the store is read through its own API)."""

from __future__ import annotations

from pathlib import Path

from tests import reportruns

REPO = Path(__file__).resolve().parents[3]


def test_build_from_run_folders_names_every_run_page(run_cli, tmp_path):
    reportruns.write_run(tmp_path / "a", "11", evals=(0.95,))
    reportruns.write_run(tmp_path / "b", "local-x", seed=1)
    code, out, err = run_cli("report", "build", "--out", tmp_path / "site", "--from-run",
                             tmp_path / "b", "--from-run", tmp_path / "a", "--title",
                             "Nightly <sweeps>", cwd=tmp_path)
    assert code == 0, err
    site = tmp_path / "site"
    assert out.splitlines() == [
        f"7 page(s), 3 chart(s), 28 plotted point(s) from 2 run(s): {site / 'index.html'}",
        f"run 11: {site / 'runs' / '11-1.html'}",
        f"run local-x: {site / 'runs' / 'local-x-1.html'}"]
    assert "evals are shown without a verdict" in err  # no configs/ in that folder
    assert "<title>Nightly &lt;sweeps&gt;</title>" in (site / "index.html").read_text()


def test_the_thresholds_of_the_working_folder_judge_the_evals(run_cli, tmp_path):
    reportruns.write_run(tmp_path / "a", "11", evals=(0.95,))
    code, _, err = run_cli("report", "build", "--out", tmp_path / "site", "--from-run",
                           tmp_path / "a", cwd=REPO)
    assert code == 0 and "warning" not in err
    page = (tmp_path / "site" / "runs" / "11-1.html").read_text()
    assert '<tr class="pass">' in page and "0.91 (models.dsv4)" in page
