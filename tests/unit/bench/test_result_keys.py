import math

from infersweep.bench import result
from infersweep.bench.metrics import summarize
from infersweep.bench.runner import BenchArgs

IX_KEYS = ["date", "backend", "model_id", "tokenizer_id", "best_of", "num_prompts",
           "request_rate", "burstiness", "max_concurrency", "duration",
           "benchmark_start_time_unix", "benchmark_end_time_unix", "completed",
           "total_input_tokens", "total_output_tokens", "request_throughput", "request_goodput:",
           "output_throughput", "total_token_throughput", "input_lens", "output_lens"]


def test_result_has_inferencex_keys_in_order():
    recs = [{"id": 0, "ok": True, "start_s": 0.0, "chunk_gaps_us": [1000, 2000],
             "output_tokens": 2, "prompt_len": 4}]
    s = summarize(recs, 1, 1.0)
    a = BenchArgs(model="org/model", max_concurrency=4)
    out = result.build(args=a, summary=s, input_lens=[4], output_lens=[2], start_unix=1.0,
                       end_unix=2.0, date="20260101-000000", extras={})
    keys = list(out)
    assert keys[: len(IX_KEYS)] == IX_KEYS
    for m in ("ttft", "tpot", "itl", "e2el"):
        for stat in ("mean", "median", "std", "p90", "p99", "p99.9"):
            assert f"{stat}_{m}_ms" in out
    assert out["request_rate"] == "inf" and out["failed"] == 0
    assert result.default_filename("openai", math.inf, 4, "org/model", "D") == \
        "openai-infqps-concurrency4-model-D.json"
