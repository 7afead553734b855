"""A supervisor signals only the main PID: `bench serve` must stop its worker processes with
it, write a complete partial result (marked as interrupted) or none, never a truncated file,
and remove its scratch folder."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.integration.simharness import Sim

pytestmark = pytest.mark.integration

# 100 output tokens at 100 ms: each request streams for ~10 s, so the run is surely in progress
SLOW = ["--fixed-ttft-ms", "50", "--fixed-itl-ms", "100"]


def children_of(pid: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(entry.name))
    return out


def running(pid: int) -> bool:
    """Alive and not a zombie waiting to be reaped."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def stats(sim) -> dict:
    return json.loads(sim.get("/debug/stats"))


def start_bench(sim, tmp: Path, *extra: str) -> tuple[subprocess.Popen, Path]:
    scratch = tmp / "tmpdir"
    scratch.mkdir()
    out = tmp / "out"
    cmd = [sys.executable, "-m", "infersweep", "bench", "serve", "--base-url", sim.url,
           "--model", "m", "--random-input-len", "16", "--random-output-len", "100",
           "--ignore-eos", "--num-prompts", "40", "--max-concurrency", "8", "--num-workers", "2",
           "--save-result", "--result-dir", str(out), "--result-filename", "res.json", *extra]
    env = {**os.environ, "TMPDIR": str(scratch)}
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)
    return proc, scratch


def wait_for(cond, what: str, proc, timeout: float = 30) -> None:
    end = time.monotonic() + timeout
    while not cond():
        if proc.poll() is not None:
            raise AssertionError(f"bench exited early: {proc.communicate()[1][-2000:]}")
        assert time.monotonic() < end, f"timed out waiting for {what}"
        time.sleep(0.05)


CASES = [
    # (id, signal, extra args, phase: "measured" = during measured requests, "warmup")
    ("sigterm-measured", signal.SIGTERM, [], "measured"),
    ("sigint-measured", signal.SIGINT, [], "measured"),
    ("sigterm-during-warmups", signal.SIGTERM, ["--num-warmups", "8"], "warmup"),
]


@pytest.mark.parametrize("sig,extra,phase", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_signal_to_the_parent_alone_stops_everything(tmp_path, sig, extra, phase):
    sim = Sim(*SLOW)
    try:
        proc, scratch = start_bench(sim, tmp_path, *extra)
        # the probe, then the first wave of 8 (warm-ups or measured requests) at the server
        wait_for(lambda: stats(sim)["requests"] >= 9, "requests at the server", proc)
        time.sleep(1.0)  # into the ~10 s streams
        kids = children_of(proc.pid)
        assert len([k for k in kids if running(k)]) >= 2, kids
        t_sig = time.monotonic()
        proc.send_signal(sig)  # the parent only, as a supervisor would
        out, err = proc.communicate(timeout=20)
        stopped_in = time.monotonic() - t_sig
        assert "Traceback" not in err, err
        assert proc.returncode == 128 + sig, err
        assert stopped_in < 8, f"took {stopped_in:.1f}s to stop"
        end = time.monotonic() + 5
        while any(running(k) for k in kids) and time.monotonic() < end:
            time.sleep(0.05)
        assert not [k for k in kids if running(k)], "worker processes outlived their parent"
        # the server is no longer being loaded
        time.sleep(0.5)
        seen = stats(sim)["requests"]
        time.sleep(1.0)
        assert stats(sim)["requests"] == seen and stats(sim)["inflight"] == 0
    finally:
        sim.stop()
    assert list(scratch.iterdir()) == [], "scratch folder left behind"
    out_dir = tmp_path / "out"
    files = sorted(p.name for p in out_dir.iterdir()) if out_dir.exists() else []
    assert not any(n.startswith(".") for n in files), f"temporary files left: {files}"
    assert "res.json" not in files  # an interrupted run never poses as a complete result
    if phase == "measured":
        assert files == ["res.interrupted.json", "res.interrupted.records.jsonl"], files
        r = json.loads((out_dir / "res.interrupted.json").read_text())  # complete JSON
        mark = r["infersweep"]["interrupted"]
        assert mark["signal"] == signal.Signals(sig).name
        assert mark["finished"] + mark["not_finished"] == 40 and mark["not_finished"] > 0
        lines = (out_dir / "res.interrupted.records.jsonl").read_text().splitlines()
        assert json.loads(lines[0])["meta"]["interrupted"] == signal.Signals(sig).name
        assert len(lines) - 1 == mark["finished"]
        assert r["duration"] > 0.9  # the window lasts until the stop
    else:
        assert files == [], files  # stopped before the measured window: nothing written
        assert "before the measured run started" in err or "interrupted by" in err


def test_parent_killed_outright_takes_its_workers_with_it(tmp_path):
    sim = Sim(*SLOW)
    try:
        proc, _ = start_bench(sim, tmp_path)
        wait_for(lambda: stats(sim)["requests"] >= 5, "requests at the server", proc)
        kids = children_of(proc.pid)
        assert len(kids) >= 2
        proc.kill()  # no handler can run: the kernel must stop the children
        proc.communicate(timeout=10)
        end = time.monotonic() + 5
        while any(running(k) for k in kids) and time.monotonic() < end:
            time.sleep(0.05)
        assert not [k for k in kids if running(k)], "workers survived a killed parent"
    finally:
        sim.stop()
