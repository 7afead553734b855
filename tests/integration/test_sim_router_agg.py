"""`sim router --worker`: aggregated workers behind the simulator's router, with the real
client; and the command's refusal of a mixed or empty worker list."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request

import pytest

from tests.integration.simharness import FAST, bench, free_port, wait_health

pytestmark = pytest.mark.integration


def test_requests_spread_over_aggregated_workers(sim, tmp_path):
    workers = [sim("--dp-size", "2", "--max-num-seqs", "2", *FAST) for _ in range(2)]
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    cmd = [sys.executable, "-m", "infersweep", "sim", "router", "--port", str(port)]
    for w in workers:
        cmd += ["--worker", w.url]
    router = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_health(url, router, timeout=30)
        p, data = bench(url, tmp_path, "--num-prompts", "24", "--max-concurrency", "8",
                        "--num-warmups", "0")
        assert p.returncode == 0, p.stderr[-2000:]
        assert data["completed"] == 24 and data["failed"] == 0
        served = [json.loads(w.get("/debug/stats")) for w in workers]
        counts = sorted(s["success"] for s in served)  # the client's probe request too
        assert counts[1] - counts[0] <= 1 and sum(counts) >= 24  # round-robin
        assert [s["dp_size"] for s in served] == [2, 2]
        with urllib.request.urlopen(url + "/debug/timings", timeout=5) as r:
            truth = [json.loads(x) for x in r.read().splitlines()]
        assert {t["worker"] for t in truth} == {w.url for w in workers}
    finally:
        router.terminate()
        router.wait(timeout=10)


@pytest.mark.parametrize(("args", "message"), [
    (["--worker", "http://127.0.0.1:9", "--decode", "http://127.0.0.1:9"], "do not go together"),
    (["--prefill", "http://127.0.0.1:9"], "give --prefill and --decode URLs"),
    ([], "or --worker URLs (aggregated)"),
])
def test_router_refuses_a_mixed_or_missing_worker_list(args, message):
    p = subprocess.run([sys.executable, "-m", "infersweep", "sim", "router", *args],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and message in p.stderr, p.stderr
