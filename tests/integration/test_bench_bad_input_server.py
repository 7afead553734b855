"""Bad input and failures of `bench serve` that need a running server, table-driven with the
corpus' assertions (tests/badinput.py): exit code, a message fragment, no traceback, no
partial file. The CPU-only cases are in tests/data/bad-input/bench.yaml."""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.integration.simharness import Sim

pytestmark = pytest.mark.integration


def _swap_result_dir_for_a_file(out: Path, sim: Sim) -> None:
    """After the run has started, a file takes the place of the result folder (which does not
    exist yet: the run creates it only when it writes)."""
    end = time.monotonic() + 30
    while json.loads(sim.get("/debug/stats"))["requests"] < 4:
        assert time.monotonic() < end
        time.sleep(0.05)
    shutil.rmtree(out, ignore_errors=True)
    out.write_text("not a folder any more")


def _immutable(path: Path, on: bool) -> bool:
    flag = "+i" if on else "-i"
    return shutil.which("chattr") is not None and subprocess.run(
        ["chattr", flag, str(path)], capture_output=True).returncode == 0


def _make_result_dir_read_only_mid_run(out: Path, sim: Sim) -> None:
    """The result folder exists and passes the pre-run check, then becomes read-only for
    everyone, root included (the immutable attribute), while the run goes."""
    end = time.monotonic() + 30
    while json.loads(sim.get("/debug/stats"))["requests"] < 4:
        assert time.monotonic() < end
        time.sleep(0.05)
    assert _immutable(out, True)


def _can_make_immutable(tmp: Path) -> bool:
    probe = tmp / "immutable-probe"
    probe.mkdir()
    ok = _immutable(probe, True)
    if ok:
        _immutable(probe, False)
    probe.rmdir()
    return ok


def _file_size_limit(limit: int):
    """A real write failure at the end (EFBIG, as on a full disk) for files over ``limit``:
    the workers' part files fit, the merged records file does not."""

    def preexec():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return preexec


@dataclass
class Case:
    id: str
    bench: list[str]
    exit: int
    message: str
    sim: list[str] = field(default_factory=lambda: ["--fixed-ttft-ms", "5", "--fixed-itl-ms", "20"])
    stage: object = None          # called with (result folder, sim) while the run goes
    preexec: object = None
    absent: list[str] = field(default_factory=list)   # under the result folder
    kept: bool = False            # the outputs must be kept in a named scratch folder
    result_dir_exists: bool = False
    needs_immutable: bool = False  # chattr +i (root on ext4 and the like), else skipped


CASES = [
    Case("result-folder-replaced-by-a-file-mid-run",
         ["--num-prompts", "16", "--max-concurrency", "8"], 1,
         "outputs could not all be written; kept in", stage=_swap_result_dir_for_a_file,
         kept=True),
    Case("result-folder-made-read-only-mid-run",
         ["--num-prompts", "16", "--max-concurrency", "8"], 1,
         "outputs could not all be written; kept in", stage=_make_result_dir_read_only_mid_run,
         kept=True, result_dir_exists=True, needs_immutable=True,
         absent=["res.json", "res.records.jsonl"]),
    Case("file-system-refuses-the-records-at-the-end",
         ["--num-prompts", "64", "--max-concurrency", "32", "--num-workers", "2"], 1,
         "File too large", preexec=_file_size_limit(40_000), absent=["res.records.jsonl"],
         kept=True),
    Case("model-the-server-does-not-serve",
         ["--model", "not-served", "--num-prompts", "4"], 1, "test request to",
         absent=["res.json", "res.records.jsonl"]),
    Case("server-answers-without-usage",
         ["--num-prompts", "4"], 1, "missing_usage", sim=["--fixed-ttft-ms", "5",
                                                          "--fixed-itl-ms", "2", "--omit-usage"],
         absent=["res.json", "res.records.jsonl"]),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_bench_fails_cleanly_with_a_server(case, tmp_path):
    if case.needs_immutable and not _can_make_immutable(tmp_path):
        pytest.skip("cannot set the immutable attribute here (needs root and chattr)")
    scratch = tmp_path / "tmpdir"
    scratch.mkdir()
    out = tmp_path / "out"
    if case.result_dir_exists:
        out.mkdir()
    sim = Sim(*case.sim)
    args = ["--model", "m", "--random-input-len", "16", "--random-output-len", "100",
            "--ignore-eos", *case.bench]
    if args.count("--model") > 1:
        args = args[2:]
    cmd = [sys.executable, "-m", "infersweep", "bench", "serve", "--base-url", sim.url, *args,
           "--save-result", "--result-dir", str(out), "--result-filename", "res.json"]
    try:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env={**os.environ, "TMPDIR": str(scratch)},
                                preexec_fn=case.preexec)
        if case.stage:
            case.stage(out, sim)
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        sim.stop()
        if case.needs_immutable:
            _immutable(out, False)
    output = stdout + stderr
    assert "Traceback" not in output, output
    assert proc.returncode == case.exit, output
    assert case.message in output, output
    for rel in case.absent:
        assert not (out / rel).exists(), f"{rel} was written"
    if out.is_dir():
        assert not [p.name for p in out.iterdir() if p.name.startswith(".")], "temp file left"
    kept = list(scratch.iterdir())
    if not case.kept:
        assert kept == [], "scratch folder left behind"
        return
    # the records survive, in the folder the message names, and are usable
    assert len(kept) == 1 and str(kept[0]) in stderr, stderr
    records = kept[0] / "res.records.jsonl"
    if records.exists():
        again = subprocess.run([sys.executable, "-m", "infersweep", "bench", "recompute",
                                str(records)], capture_output=True, text=True)
        assert again.returncode == 0, again.stderr
        n = int(case.bench[case.bench.index("--num-prompts") + 1])
        assert json.loads(again.stdout)["completed"] == n
    else:  # not even the scratch copy fitted: the workers' own files, and how to join them
        parts = sorted(p.name for p in kept[0].iterdir())
        assert parts and all(p.startswith(("part-", "meta-", "records-meta")) for p in parts)
        assert "part-*.jsonl" in stderr and "records-meta.jsonl" in stderr
        joined = tmp_path / "joined.records.jsonl"
        with open(joined, "wb") as f:
            for name in ["records-meta.jsonl"] + [p for p in parts if p.startswith("part-")]:
                f.write((kept[0] / name).read_bytes())
        again = subprocess.run([sys.executable, "-m", "infersweep", "bench", "recompute",
                                str(joined)], capture_output=True, text=True)
        assert again.returncode == 0, again.stderr
        assert json.loads(again.stdout)["completed"] == 64
