"""The bundled client on bare interpreters (3.10 to 3.13: no site packages, no infersweep
installed) against the simulator: the same result as the installed client's, the same
metrics from the same records, and the stdlib fallbacks it used named in the result."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from infersweep.bench.bundle import build
from tests.integration import bundleharness as bh
from tests.integration.simharness import Sim

pytestmark = pytest.mark.integration

# fixed simulator timing, a workload with distinct lengths, 2 workers: every code path of a run
ARGS = ["--model", "m", "--random-input-len", "96", "--random-output-len", "24",
        "--random-range-ratio", "0.5", "--num-prompts", "48", "--num-warmups", "8",
        "--max-concurrency", "16", "--request-rate", "inf", "--num-workers", "2",
        "--ignore-eos", "--seed", "11", "--percentile-metrics", "ttft,tpot,itl,e2el",
        "--metric-percentiles", "50,90,99,99.9", "--save-result", "--ready-timeout", "20"]
TIMING = ("duration", "benchmark_start_time_unix", "benchmark_end_time_unix", "date",
          "request_throughput", "request_goodput:", "output_throughput",
          "total_token_throughput")


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    return build(tmp_path_factory.mktemp("bundle") / "infersweep-bench.pyz").path


@pytest.fixture(scope="module")
def sim():
    s = Sim("--fixed-ttft-ms", "20", "--fixed-itl-ms", "4")
    yield s
    s.stop()


@pytest.fixture(scope="module")
def installed_result(sim, tmp_path_factory):
    out = tmp_path_factory.mktemp("installed")
    p = subprocess.run([sys.executable, "-m", "infersweep", "bench", "serve", "--base-url",
                        sim.url, *ARGS, "--result-dir", str(out), "--result-filename", "r.json"],
                       capture_output=True, text=True, timeout=180)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads((out / "r.json").read_text()), out / "r.records.jsonl"


def _recompute(cmd: list[str], records: Path) -> dict:
    p = subprocess.run([*cmd, str(records)], capture_output=True, text=True, timeout=120,
                       env=bh.bare_env())
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout)


@pytest.mark.parametrize("version", bh.VERSIONS)
def test_bundle_on_a_bare_interpreter_measures_like_the_installed_client(
        version, bundle, sim, installed_result, tmp_path):
    base = bh.find_python(version)
    if base is None:
        pytest.skip(bh.skip_reason(version))
    py = bh.bare_python(base, tmp_path / "venv")
    out = tmp_path / "out"
    p = subprocess.run([str(py), "-I", str(bundle), "serve", "--base-url", sim.url, *ARGS,
                        "--result-dir", str(out), "--result-filename", "r.json"],
                       capture_output=True, text=True, timeout=180, env=bh.bare_env(),
                       cwd=tmp_path)
    assert p.returncode == 0, p.stderr[-3000:]
    assert "Traceback" not in p.stderr
    got = json.loads((out / "r.json").read_text())
    want, want_records = installed_result

    # the same fields in the same order, the same workload and the same counts
    assert list(got) == list(want)
    assert list(got["infersweep"]) == list(want["infersweep"])
    for key in want:
        if key not in TIMING and not key.endswith("_ms") and key != "infersweep":
            assert got[key] == want[key], key
    assert got["completed"] == got["num_prompts"] == 48 and got["failed"] == 0
    assert got["infersweep"]["server_prompt_token_mismatches"] == 0
    assert got["infersweep"]["errors"] == want["infersweep"]["errors"] == {}
    # the fixed simulator schedule: TTFT 20 ms and TPOT 4 ms measured by both clients alike
    for client in (got, want):
        assert client["median_ttft_ms"] == pytest.approx(20, abs=15)
        assert client["median_tpot_ms"] == pytest.approx(4, abs=3)

    # the fallbacks named, and the build that measured it
    assert got["infersweep"]["runtime"] == {
        "python": got["infersweep"]["runtime"]["python"], "json": "stdlib", "loop": "asyncio",
        "stats": "pure-python", "progress": "plain"}
    assert got["infersweep"]["runtime"]["python"].startswith(version + ".")
    assert got["infersweep"]["build"] == {
        "kind": "bundle", "file": "infersweep-bench.pyz",
        "sha256": hashlib.sha256(bundle.read_bytes()).hexdigest()}
    assert want["infersweep"]["runtime"]["json"] == "orjson"
    assert want["infersweep"]["runtime"]["stats"] == "numpy"
    assert want["infersweep"]["build"] == {"kind": "installed"}

    # metrics computed the same way: each client's records give, in the other client, the
    # summary that client wrote itself, bit for bit (pure Python = numpy)
    installed = [sys.executable, "-m", "infersweep", "bench", "recompute"]
    bare = [str(py), "-I", str(bundle), "recompute"]
    for records, summary in ((out / "r.records.jsonl", got), (want_records, want)):
        for cmd in (installed, bare):
            again = _recompute(cmd, records)
            for key, value in again.items():
                if key.endswith("_ms"):
                    assert value == summary[key], (cmd[0], records, key)
            assert again["completed"] == summary["completed"]


def test_open_loop_without_numpy_is_refused_before_any_request(bundle, sim, tmp_path):
    base = bh.find_python("3.11") or sys.executable
    py = bh.bare_python(base, tmp_path / "venv")
    p = subprocess.run([str(py), "-I", str(bundle), "serve", "--base-url", sim.url, "--model",
                        "m", "--request-rate", "5", "--num-prompts", "4", "--save-result",
                        "--result-dir", str(tmp_path / "out")],
                       capture_output=True, text=True, timeout=60, env=bh.bare_env())
    assert p.returncode == 1
    assert "needs numpy" in p.stderr and "--request-rate inf" in p.stderr
    assert "Traceback" not in p.stderr
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_ci_has_at_least_two_interpreter_versions_for_the_bundle():
    """In CI the bundle must run on two versions at least: a skip above is then a defect."""
    found = {v: bh.find_python(v) for v in bh.VERSIONS}
    if not os.environ.get("CI"):
        pytest.skip("checked in CI only (CI=true); found here: "
                    + ", ".join(f"{v}: {p or 'none'}" for v, p in found.items()))
    assert sum(p is not None for p in found.values()) >= 2, bh.skip_reason(
        " and ".join(v for v, p in found.items() if p is None))


def test_an_older_python_gets_a_sentence_not_a_traceback(bundle):
    old = bh.find_python("3.9")
    if old is None:
        pytest.skip(bh.skip_reason("3.9"))
    p = subprocess.run([old, "-I", str(bundle), "serve", "--help"], capture_output=True,
                       text=True, timeout=60, env=bh.bare_env())
    assert p.returncode == 1
    assert "needs Python 3.10 or newer; this is 3.9" in p.stderr
    assert "Traceback" not in p.stderr
