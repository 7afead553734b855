"""The `results` commands in-process: files written, report formats, exit codes."""

from __future__ import annotations

import json

from tests import resultsrun


def _run_with(tmp_path, name, tput, ttft_ms):
    res = {c: resultsrun.result(c, c, total_token_throughput=tput, median_ttft_ms=ttft_ms)
           for c in (4, 8)}
    resultsrun.write_job(tmp_path / name, resultsrun.disagg_row([4, 8]), results=res)
    return tmp_path / name


def test_process_writes_one_row_file_per_point(tmp_path, run_cli):
    run = _run_with(tmp_path, "run", 24000.0, 150.0)
    code, _, err = run_cli("results", "process", run, "--output", tmp_path / "rows")
    assert code == 0, err
    files = sorted(p.name for p in (tmp_path / "rows").rglob("*.row.json"))
    assert files == ["mi355x-atom-dsv4-disagg-1p1d-tp8-8k1k-c4-a1.row.json",
                     "mi355x-atom-dsv4-disagg-1p1d-tp8-8k1k-c8-a1.row.json"]
    code, out, _ = run_cli("results", "process", run)
    assert [json.loads(line)["conc"] for line in out.splitlines()] == [4, 8]


def test_check_json_and_step_summary(tmp_path, run_cli):
    run = _run_with(tmp_path, "run", 24000.0, 150.0)
    summary = tmp_path / "summary.md"
    code, out, _ = run_cli("results", "check", run, "--format", "json",
                           "--step-summary", summary)
    assert code == 0
    report = json.loads(out)
    assert (report["ok"], report["expected"], report["complete"], report["problems"]) == (
        True, 2, 2, [])
    assert "the run is stageable" in summary.read_text()


def test_compare_markdown_and_fail_on_regression(tmp_path, run_cli):
    base = _run_with(tmp_path, "base", 24000.0, 150.0)
    new = _run_with(tmp_path, "new", 21600.0, 150.0)          # −10 % throughput per GPU
    code, out, _ = run_cli("results", "compare", base, new, "--output", tmp_path / "cmp.md")
    assert code == 0
    assert "| config | topology | ISL/OSL | conc |" in out
    assert "1,500.0 → 1,350.0 (-10.0%) **regression**" in out
    assert (tmp_path / "cmp.md").read_text() == out
    code, _, _ = run_cli("results", "compare", base, new, "--fail-on-regression")
    assert code == 1
    code, out, _ = run_cli("results", "compare", base, new, "--fail-on-regression",
                           "--threshold", "tput_per_gpu=12")
    assert code == 0 and "0 regression(s)" in out
