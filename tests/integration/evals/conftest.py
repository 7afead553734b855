"""Honest GSM8K eval folders made by running `infersweep eval gsm8k` against the simulator's
answer mode on the standard splits (../shared), for the tests that tamper with them."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import SHARED, shared_absent
from tests.integration.simharness import FAST, Sim

GSM8K = SHARED / "data" / "gsm8k"
SCALED = 66  # ceil(1319 / 20): the questions of a sweep at --scale-down 20


def infersweep(*args, timeout: float = 300, env=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "infersweep", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout, env=env)


@pytest.fixture(scope="session")
def gsm8k() -> tuple[Path, Path]:
    test, train = GSM8K / "test.jsonl", GSM8K / "train.jsonl"
    if not (test.is_file() and train.is_file()):
        shared_absent(f"the GSM8K splits are not in {GSM8K}")
    return test, train


def run_eval(gsm8k, out: Path, *sim_args: str, limit: int | None = SCALED,
             extra=()) -> subprocess.CompletedProcess:
    """`eval gsm8k` against a simulator answering at the given accuracy and faults."""
    test, train = gsm8k
    server = Sim("--eval-answer-key", str(test), *sim_args, *FAST)
    try:
        return infersweep("eval", "gsm8k", "--base-url", server.url, "--model", "m",
                          "--output-dir", out, "--test-file", test, "--train-file", train,
                          "--concurrency", 64, "--retry-backoff", "0", "--no-progress",
                          *(["--limit", limit] if limit else []), *extra)
    finally:
        server.stop()


@pytest.fixture(scope="session")
def honest(gsm8k, tmp_path_factory) -> Path:
    """A scaled-down eval (the first 66 questions) at 90 % simulated accuracy."""
    out = tmp_path_factory.mktemp("honest") / "ev"
    p = run_eval(gsm8k, out, "--eval-accuracy", "0.9")
    assert p.returncode == 0, p.stderr[-3000:]
    return out


@pytest.fixture(scope="session")
def with_failures(gsm8k, tmp_path_factory) -> Path:
    """A scaled-down eval in which some requests failed (one attempt, 15 % HTTP 500)."""
    out = tmp_path_factory.mktemp("failures") / "ev"
    p = run_eval(gsm8k, out, "--eval-accuracy", "0.96", "--fail-rate", "0.15",
                 "--fault-seed", "3", extra=["--max-attempts", 1])
    assert p.returncode == 1 and "requests failed" in p.stderr, p.stderr[-3000:]
    return out


@pytest.fixture
def copy_of(tmp_path):
    """A fresh copy of an eval folder to tamper with."""
    def copy(folder: Path) -> Path:
        dst = tmp_path / "tampered" / "ev"
        shutil.copytree(folder, dst)
        return dst

    return copy
