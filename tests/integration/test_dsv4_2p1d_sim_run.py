"""The first workload's shape end to end without a GPU: a simulated 2P1D topology behind
the router, driven by the benchmark client at c=256 with 8k-in / 1k-out requests (prompt
count scaled down to one round of the concurrency)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.integration.simharness import Sim

pytestmark = pytest.mark.integration

# InferenceX's result keys that downstream tooling reads (benchmark_serving.py's result JSON)
INFERENCEX_KEYS = {
    "date", "backend", "model_id", "tokenizer_id", "num_prompts", "request_rate",
    "max_concurrency", "duration", "completed", "total_input_tokens", "total_output_tokens",
    "request_throughput", "output_throughput", "total_token_throughput",
    "mean_ttft_ms", "median_ttft_ms", "p99_ttft_ms", "mean_tpot_ms", "median_tpot_ms",
    "p99_tpot_ms", "mean_itl_ms", "median_itl_ms", "p99_itl_ms", "mean_e2el_ms",
    "median_e2el_ms", "p99_e2el_ms", "input_lens", "output_lens",
}


def test_2p1d_c256_8k1k_completes_every_request(tmp_path):
    cluster = Sim("--topology", "2p1d", "--max-model-len", "9472", "--prefill-tps", "2000000",
                  "--decode-base-ms", "2", "--decode-per-seq-ms", "0.001", "--kv-base-ms", "1",
                  "--stream-interval", "8", cmd="cluster")
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "infersweep", "bench", "serve", "--backend", "openai",
             "--base-url", cluster.url, "--model", "m", "--dataset-name", "random",
             "--random-input-len", "8192", "--random-output-len", "1024",
             "--random-range-ratio", "0.8", "--num-prompts", "256", "--num-warmups", "4",
             "--max-concurrency", "256", "--request-rate", "inf", "--ignore-eos",
             "--percentile-metrics", "ttft,tpot,itl,e2el", "--metric-percentiles", "99",
             "--save-result", "--result-dir", str(tmp_path), "--result-filename", "r.json"],
            capture_output=True, text=True, timeout=300)
        truth = [json.loads(x) for x in cluster.get("/debug/timings").splitlines()]
    finally:
        cluster.stop()
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads((tmp_path / "r.json").read_text())
    assert result["completed"] == result["num_prompts"] == 256
    assert result["max_concurrency"] == 256
    assert set(result) >= INFERENCEX_KEYS, INFERENCEX_KEYS - set(result)
    # --ignore-eos with range ratio 0.8: every output length in [819, 1024]
    assert all(819 <= n <= 1024 for n in result["output_lens"])
    assert all(int(8192 * 0.8) <= n <= 8192 for n in result["input_lens"])
    # both prefill workers served through the router, one decode worker
    assert len({t["prefill"] for t in truth}) == 2
    assert len({t["decode"] for t in truth}) == 1
