"""`infersweep sweep run` on the local executor, end to end: the seed config's two rows on the
simulator with the real client; a signal mid-run; a missing point; a rerun of what is missing."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from infersweep.rowjobs import manifest as manifests
from tests.conftest import FROZEN_MASTER, FROZEN_RUNNERS
from tests.livecatalog import frozen_checkout

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
KEY = "dsv4-fp4-mi355x-atom-disagg"
ONE = "mi355x-atom-dsv4-disagg-1p1d-tp8-8k1k"
TWO = "mi355x-atom-dsv4-disagg-2p1d-dpa-tp8-8k1k"


def sweep_cmd(out: Path, *extra: str, repo: Path | None = None) -> list[str]:
    return [sys.executable, "-m", "infersweep", "sweep", "run", "--repo",
            str(repo or frozen_checkout()),
            "--config-files", str(FROZEN_MASTER),
            "--runner-config", str(FROZEN_RUNNERS),
            "--config-keys", KEY, "--output", str(out), *extra]


def owned_processes(folder: Path) -> list[str]:
    """Processes still running whose working folder or command line is inside ``folder``
    (job runners, simulators and the benchmark step all run in their job folder)."""
    found = []
    mine = str(folder.resolve())
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cwd = os.readlink(entry / "cwd")
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (entry / "stat").read_text().split(")")[-1].split()[0]
        except OSError:
            continue
        if state != "Z" and (cwd.startswith(mine) or mine in cmd):
            found.append(f"{entry.name}: {cmd.strip()}")
    return found


def manifest_of(out: Path, name: str) -> dict:
    return manifests.load(out / KEY / name / manifests.FILENAME)


def test_seed_sweep_runs_all_eleven_points(tmp_path):
    out = tmp_path / "out"
    summary = tmp_path / "summary.md"
    env = {**os.environ, "GITHUB_STEP_SUMMARY": str(summary)}
    env.pop("GITHUB_RUN_ID", None)
    # a relative --output, as `make run` passes none (results/... under the working folder)
    cmd = sweep_cmd(Path("out"), "--scale-down", "20", "--no-evals")
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    one, two = manifest_of(out, ONE), manifest_of(out, TWO)
    assert [p["conc"] for p in one["points"]] == [4, 8, 16, 32, 64, 128]
    assert [p["conc"] for p in two["points"]] == [256, 512, 768, 1024, 2048]
    for m in (one, two):
        assert m["complete"] and m["provenance"]["job-state"] == "COMPLETED"
        assert m["provenance"]["executor"] == "local"
        assert m["scale-down"] == 20
        for p in m["points"]:
            assert p["status"] == "present" and p["completed"] == p["requested"] >= p["conc"]
            assert (p["isl"], p["osl"]) == (410, 51)
            result = json.loads((out / KEY / m["name"] / p["file"]).read_text())
            assert result["max_concurrency"] == p["conc"]
            assert result["completed"] == result["num_prompts"] == p["requested"]
    assert (one["gpus"], two["gpus"]) == ({"prefill": 8, "decode": 8, "total": 16},
                                          {"prefill": 16, "decode": 8, "total": 24})
    # the recipe that ran is the rendered one: its benchmark step is our client, every point
    recipe = (out / KEY / ONE / "recipe.yaml").read_text()
    assert recipe.count("bench serve") == 6 and "--max-concurrency 128" in recipe
    lines = proc.stdout.splitlines()
    assert lines[-2] == "11 of 11 point(s) present"
    assert lines[-1] == "stageable: yes — 11/11 points, no evals asked for"
    assert sum(1 for line in lines if line.startswith(KEY)) == 11
    assert "| dsv4-fp4-mi355x-atom-disagg" in summary.read_text()
    assert owned_processes(out) == []


def _wait_for(predicate, timeout: float, proc) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return
        if proc.poll() is not None:
            raise AssertionError(f"sweep exited early ({proc.returncode}): "
                                 + proc.stderr.read()[-3000:])
        time.sleep(0.05)
    raise AssertionError("timed out waiting for the sweep")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_stops_everything_and_the_rerun_runs_only_what_is_missing(tmp_path, sig):
    out = tmp_path / "first"
    first_point = out / KEY / ONE / "logs" / "fixed-seq" / f"{ONE}-c4.json"
    proc = subprocess.Popen(sweep_cmd(out, "--scale-down", "10", "--conc", "4", "128", "256",
                                      "--no-evals"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _wait_for(first_point.is_file, 180, proc)
        proc.send_signal(sig)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 128 + sig, stderr[-3000:]
    assert "Traceback" not in stderr
    assert f"stopped by {sig.name}" in stderr
    assert owned_processes(out) == []
    one, two = manifest_of(out, ONE), manifest_of(out, TWO)
    assert one["provenance"]["job-state"] == "CANCELLED"
    assert f"the sweep received {sig.name}" in one["provenance"]["job-reason"]
    by_conc = {p["conc"]: p for p in one["points"]}
    assert by_conc[4]["status"] == "present"
    assert by_conc[128]["status"] != "present"
    assert "cancelled" in by_conc[128]["reason"]
    assert two["provenance"]["job-id"] is None
    assert two["points"][0]["status"] == "missing"
    assert f"not run: the sweep received {sig.name} first" in two["points"][0]["reason"]
    assert "1 of 3 point(s) present" in stdout

    again = tmp_path / "second"
    proc = subprocess.run(sweep_cmd(again, "--scale-down", "10", "--conc", "4", "128", "256",
                                    "--no-evals",
                                    "--previous-manifest", str(out)),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "1 point(s) 128 (1 carried over)" in proc.stderr
    one, two = manifest_of(again, ONE), manifest_of(again, TWO)
    assert one["complete"] and two["complete"]
    assert one["provenance"]["attempt"] == 2
    assert [(p["conc"], p["attempt"]) for p in one["points"]] == [(4, 1), (128, 2)]
    assert (again / KEY / ONE / one["points"][0]["file"]).is_file()
    recipe = (again / KEY / ONE / "recipe.yaml").read_text()
    assert "--max-concurrency 128" in recipe and "--max-concurrency 4 " not in recipe


def test_a_staged_sweep_lands_in_the_store_and_the_report(tmp_path):
    from infersweep.report.comparedata import load_script
    from infersweep.store import open_store

    db, site = tmp_path / "store.db", tmp_path / "site"
    repo = frozen_checkout()
    appended = f"- config-keys:\n    - {KEY}\n  description:\n    - Between the runs.\n  pr-link: XXX\n"
    runs = []
    for name in ("first", "second"):  # two runs: both stay in the store and the report
        if name == "second":  # the changelog entry a user appends with a config change
            with (repo / "perf-changelog.yaml").open("a") as fh:
                fh.write("\n" + appended)
        proc = subprocess.run(sweep_cmd(tmp_path / name, "--scale-down", "20", "--no-evals",
                                        "--stage", "--db", str(db), "--site", str(site),
                                        repo=repo),
                              capture_output=True, text=True, timeout=600, cwd=tmp_path)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        run_id = manifest_of(tmp_path / name, ONE)["provenance"]["run-id"]
        runs.append(run_id)
        lines = proc.stdout.splitlines()
        assert lines[-4] == "stageable: yes — 11/11 points, no evals asked for"
        assert lines[-3].startswith(f"staged run {run_id} attempt 1: 11 point(s) inserted")
        assert lines[-2] == f"report: {(site / 'index.html').as_uri()}"
        page = site / "runs" / f"{run_id}-1.html"
        assert lines[-1] == f"this run: {page.as_uri()}"
        assert page.is_file() and run_id in page.read_text()
    with open_store(str(db)) as store:
        staged = store.staged_runs()
    assert [(r.run_id, len(r.points)) for r in staged] == [(runs[0], 11), (runs[1], 11)]
    index = (site / "index.html").read_text()
    assert all(r in index for r in runs)
    # each run carries the changelog entries naming its config; the compare page's data has
    # the appended one on the second run alone
    first, second = (r.changelog["entries"] for r in staged)
    assert first and first == second[:-1]
    assert second[-1]["description"] == ["Between the runs."]
    compare = load_script((site / "compare-data.js").read_text())
    ids = [set(compare["runs"][f"{r}-1"]["changelog"]) for r in runs]
    [new] = ids[1] - ids[0]
    assert compare["entries"][new]["description"] == ["Between the runs."]


def test_stage_refuses_a_site_that_is_a_file_before_any_work(tmp_path):
    (tmp_path / "site").write_text("not a folder")
    proc = subprocess.run(sweep_cmd(tmp_path / "out", "--stage", "--site",
                                    str(tmp_path / "site")),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "site" in proc.stderr.splitlines()[0]
    assert not (tmp_path / "out").exists()


def test_a_missing_point_fails_the_sweep(tmp_path):
    out = tmp_path / "out"
    proc = subprocess.run(sweep_cmd(out, "--scale-down", "10", "--conc", "2048", "--no-evals",
                                    "--timeout", "3", "--stage", "--db",
                                    str(tmp_path / "store.db")),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    m = manifest_of(out, TWO)
    assert m["complete"] is False and m["provenance"]["job-state"] == "CANCELLED"
    point = m["points"][0]
    # no result file, or the partial one the stopped client wrote: never "present"
    assert point["status"] in ("missing", "incomplete")
    assert "--timeout of 3 s expired" in point["reason"]
    assert (f"error: {KEY} {TWO} (job {m['provenance']['job-id']}): point c=2048 "
            f"{point['status']}: ") in proc.stderr
    assert "0 of 1 point(s) present" in proc.stdout
    assert proc.stdout.splitlines()[-1].startswith("stageable: no — 1 point ")
    assert "(c=2048)" in proc.stdout.splitlines()[-1]
    assert "not staged: the run is not stageable" in proc.stderr
    assert not (tmp_path / "store.db").exists()
    assert owned_processes(out) == []


def test_a_killed_sweep_leaves_no_process(tmp_path):
    """SIGKILL gives the sweep no chance to clean up: the job notices its parent died."""
    out = tmp_path / "out"
    status = out / KEY / TWO / "job-status.json"
    proc = subprocess.Popen(sweep_cmd(out, "--scale-down", "10", "--conc", "2048"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _wait_for(lambda: status.is_file() and '"benchmark"' in status.read_text(), 180, proc)
        assert owned_processes(out)  # engines and client are running
        proc.kill()
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    end = time.monotonic() + 30
    while owned_processes(out) and time.monotonic() < end:
        time.sleep(0.2)
    assert owned_processes(out) == []
    final = json.loads(status.read_text())
    assert (final["state"], final["reason"]) == ("CANCELLED", "received SIGTERM")
