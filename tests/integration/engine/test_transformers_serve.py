"""The client and the eval against a real third-party engine: `transformers serve` on this
CPU (conftest.py). Small on purpose: 64 tokens in, 16 out, concurrency 1-2, a few seconds
of generation in all.

What the engine does that the simulator does not: usage once, in the last chunk, next to an
empty choice (stream_options ignored); a role-only first chat chunk sent before prefill;
chat's max_completion_tokens ignored; no ``data: [DONE]``; one token per event.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from infersweep.evals import dataset
from tests.integration.engine.tap import Tap

pytestmark = pytest.mark.integration

ISL, OSL = 64, 16


def bench(engine, out: Path, name: str, *args, url: str | None = None, env=None,
          ok: bool = True):
    """`bench serve` as a recipe runs it (a subprocess), against ``url`` or the engine."""
    cmd = [sys.executable, "-m", "infersweep", "bench", "serve", "--base-url",
           url or engine.url, "--model", engine.model, "--tokenizer", engine.model,
           "--random-input-len", str(ISL), "--random-output-len", str(OSL),
           "--save-result", "--result-dir", str(out), "--result-filename", name,
           "--no-progress", *map(str, args)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
    assert (p.returncode == 0) is ok, p.stderr[-3000:] + "\n--- engine log ---\n" + engine.tail()
    result = json.loads((out / name).read_text())
    lines = (out / name).with_suffix(".records.jsonl").read_text().splitlines()
    return p, result, [json.loads(x) for x in lines[1:]]


def test_token_counts_and_itl_match_what_the_engine_generated(engine, tmp_path):
    p, r, recs = bench(engine, tmp_path, "c2.json", "--num-prompts", 8, "--max-concurrency", 2,
                       "--save-detailed")
    assert r["completed"] == 8 and r["failed"] == 0
    # tokens counted = tokens generated: the engine's usage, and the words of the text
    # (one word per token in this vocabulary)
    assert r["total_output_tokens"] == 8 * OSL
    assert [len(t.split()) for t in r["generated_texts"]] == [OSL] * 8
    for rec in recs:
        assert rec["output_tokens"] == OSL == rec["intended_output_len"]
        # one text chunk per token, then the final chunk: usage with an empty choice
        assert rec["chunk_tokens"] == [-1] * OSL + [0]
        assert rec["finish_reason"] == "length"
        assert rec["server_prompt_tokens"] == rec["prompt_len"] == ISL
    assert r["infersweep"]["output_length_mismatches"] == 0
    assert r["infersweep"]["cached_prompt_tokens"] is None  # the engine does not report it
    # ITL: one sample per token after the first, the engine's inter-token gaps
    itl_p50, tpot_p50 = r["median_itl_ms"], r["median_tpot_ms"]
    assert itl_p50 > 1.0 and 0.5 * tpot_p50 < itl_p50 < 2.0 * tpot_p50, (itl_p50, tpot_p50)
    gaps = [g / 1000 for rec in recs for g in rec["chunk_gaps_us"][1:OSL]]
    assert itl_p50 == pytest.approx(statistics.median(gaps), rel=0.01)
    print(f"\nITL p50 {itl_p50:.2f} ms, TPOT p50 {tpot_p50:.2f} ms, TTFT p50 "
          f"{r['median_ttft_ms']:.2f} ms, {r['total_output_tokens']} tokens counted, "
          f"warm-up {engine.warm_s:.1f} s, run {r['duration']:.2f} s")


def test_points_of_one_run_send_fresh_prompts_and_a_seed_sends_them_again(engine, tmp_path):
    """What went over the wire, read by a tap: two points of one run (the executors set
    INFERSWEEP_RUN_ID) send different prompts; the seed one of them recorded sends its
    prompts again."""
    tap = Tap(engine.port)
    env = {**os.environ, "INFERSWEEP_RUN_ID": "engine-test-a1"}
    try:
        sent = []
        results = []
        for conc in (1, 2):
            before = len(tap.bodies())
            _, r, _ = bench(engine, tmp_path, f"run-c{conc}.json", "--num-prompts", 2,
                            "--max-concurrency", conc, "--no-probe", url=tap.url, env=env)
            sent.append(sorted(b["prompt"] for b in tap.bodies()[before:]))
            results.append(r["infersweep"])
        assert all(x["seed_origin"] == "run" and x["run_id"] == "engine-test-a1"
                   for x in results)
        assert results[0]["seed"] != results[1]["seed"]
        assert len(sent[0]) == len(sent[1]) == 2 and not set(sent[0]) & set(sent[1])
        before = len(tap.bodies())
        _, again, _ = bench(engine, tmp_path, "again.json", "--num-prompts", 2,
                            "--max-concurrency", 1, "--no-probe", "--seed",
                            results[0]["seed"], url=tap.url)
        assert sorted(b["prompt"] for b in tap.bodies()[before:]) == sent[0]
        assert again["infersweep"]["seed_origin"] == "option"
    finally:
        tap.close()


def test_chat_an_ignored_length_fails_the_requests_and_ttft_waits_for_content(engine, tmp_path):
    """The engine ignores max_completion_tokens and answers its default length (1,024
    tokens; 24 here, through --extra-body's engine-specific generation_config, to stay
    quick): more than a request asked for fails it (output_over_limit)."""
    gen = json.dumps({"max_new_tokens": 24, "do_sample": False})
    p, r, recs = bench(engine, tmp_path, "chat.json", "--backend", "openai-chat",
                       "--num-prompts", 2, "--max-concurrency", 2,
                       "--extra-body", json.dumps({"generation_config": gen}), ok=False)
    ext = r["infersweep"]
    assert r["completed"] == 0 and r["failed"] == 2
    assert ext["extra_body"] == {"generation_config": gen}
    for rec in recs:
        assert (rec["output_tokens"], rec["intended_output_len"]) == (24, OSL)
        assert rec["error_class"] == "output_over_limit"
        assert rec["chunk_tokens"][0] == 0  # the role-only chunk, before prefill
        assert rec["first_s"] < rec["first_token_s"]  # TTFT waits for content


def eval_gsm8k(engine, tmp_path: Path, api: str, limit: int):
    test, train = dataset.write(tmp_path / "data", n_test=limit, n_train=5)
    out = tmp_path / f"eval-{api}"
    p = subprocess.run([sys.executable, "-m", "infersweep", "eval", "gsm8k", "--base-url",
                        engine.url, "--model", engine.model, "--api", api,
                        "--test-file", test, "--train-file", train, "--limit", str(limit),
                        "--num-fewshot", "0", "--max-completion-tokens", "16",
                        "--concurrency", "2", "--output-dir", out, "--no-progress"],
                       capture_output=True, text=True, timeout=300)
    assert "Traceback" not in p.stderr, p.stderr[-3000:]
    assert (out / "eval.json").is_file(), p.stderr[-3000:] + "\n" + engine.tail()
    summary = json.loads((out / "eval.json").read_text())
    samples = (out / "samples.jsonl").read_text().splitlines()
    return p, summary, samples


@pytest.mark.parametrize("api", ["chat", "completions"])
def test_gsm8k_eval_runs_to_the_end_with_every_request_answered(engine, tmp_path, api):
    """`infersweep eval gsm8k` end to end on a real engine (a random model: the score is
    about 0). Each API gets the limit under the name the engine honours (completions only
    max_tokens, which this engine checks; chat both), so every answer stops at 16 tokens
    and every request is answered."""
    p, summary, samples = eval_gsm8k(engine, tmp_path, api, limit=2)
    req = summary["requests"]
    assert summary["n-samples"] == len(samples) == 2 and summary["api"] == api
    assert (req["total"], req["ok"], req["failed"]) == (2, 2, 0), req
    assert p.returncode == 0, p.stderr[-2000:]
