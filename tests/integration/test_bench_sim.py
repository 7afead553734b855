"""End to end: the simulator serving real HTTP on loopback, the client as a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request

import pytest

from tests.integration.simharness import FAST, GSM8K, bench, free_port

pytestmark = pytest.mark.integration

def test_closed_loop_run_matches_ground_truth(sim, tmp_path):
    s = sim(*FAST)
    p, r = bench(s.url, tmp_path, "--num-prompts", "60", "--max-concurrency", "12",
                 "--num-warmups", "4", "--random-range-ratio", "0.5", "--ignore-eos")
    assert p.returncode == 0, p.stderr
    assert r["completed"] == 60 and r["failed"] == 0
    assert r["total_output_tokens"] == sum(r["output_lens"])
    assert all(8 <= n <= 16 for n in r["output_lens"]) and all(32 <= n <= 64 for n in r["input_lens"])
    # the client's token counts agree with the server's ground truth
    truth = [json.loads(x) for x in s.get("/debug/timings").splitlines()]
    assert len(truth) == 60 + 4 + 1  # measured + warm-ups + readiness test request
    assert r["mean_itl_ms"] == pytest.approx(2.0, abs=1.0)
    assert r["infersweep"]["server_prompt_token_mismatches"] == 0
    # the summary is recomputable from the per-request records
    out = subprocess.run([sys.executable, "-m", "infersweep", "bench", "recompute",
                          str(tmp_path / "res.records.jsonl")], capture_output=True, text=True)
    again = json.loads(out.stdout)
    for k in ("completed", "total_output_tokens", "mean_ttft_ms", "p99_itl_ms", "mean_e2el_ms"):
        assert again[k] == pytest.approx(r[k])


def test_multiple_workers_and_chat_endpoint(sim, tmp_path):
    s = sim(*FAST)
    p, r = bench(s.url, tmp_path, "--backend", "openai-chat", "--num-prompts", "40",
                 "--max-concurrency", "10", "--num-workers", "2")
    assert p.returncode == 0, p.stderr
    assert r["completed"] == 40 and r["infersweep"]["client"]["workers"] == 2
    assert r["infersweep"]["endpoint"] == "/v1/chat/completions"
    assert r["infersweep"]["server_prompt_token_mismatches"] == 0


def test_open_loop_poisson(sim, tmp_path):
    s = sim(*FAST)
    p, r = bench(s.url, tmp_path, "--num-prompts", "30", "--request-rate", "200")
    assert p.returncode == 0, p.stderr
    recs = [json.loads(x) for x in (tmp_path / "res.records.jsonl").read_text().splitlines()[1:]]
    assert all(x["scheduled_s"] is not None for x in recs)
    assert max(x["start_s"] - x["scheduled_s"] for x in recs) < 0.5  # sends follow the schedule
    assert r["request_rate"] == 200.0


def test_multi_token_chunks_give_per_token_itl(sim, tmp_path):
    s = sim("--fixed-ttft-ms", "5", "--fixed-itl-ms", "3", "--stream-interval", "4")
    p, r = bench(s.url, tmp_path, "--num-prompts", "10", "--max-concurrency", "5")
    assert p.returncode == 0, p.stderr
    assert r["mean_chunk_gap_ms"] == pytest.approx(12.0, rel=0.3)
    assert r["mean_itl_ms"] == pytest.approx(3.0, rel=0.3)


def test_sse_comments_and_crlf_are_parsed(sim, tmp_path):
    s = sim(*FAST, "--sse-comments", "--crlf")
    p, r = bench(s.url, tmp_path, "--num-prompts", "10", "--max-concurrency", "5")
    assert p.returncode == 0, p.stderr
    assert r["completed"] == 10


def test_failure_gate_trips_with_partial_results(sim, tmp_path):
    s = sim(*FAST, "--fail-rate", "0.2", "--midstream-error-rate", "0.1", "--fault-seed", "3")
    p, r = bench(s.url, tmp_path, "--num-prompts", "50", "--max-concurrency", "10", "--no-probe")
    assert p.returncode == 2
    assert "failed" in p.stderr and "--max-failed-fraction" in p.stderr
    errs = r["infersweep"]["errors"]
    assert set(errs) <= {"http_5xx", "stream_error"} and errs.get("http_5xx")
    assert r["completed"] + r["failed"] == 50 and r["failed"] == sum(errs.values())
    assert r["completed"] == sum(1 for n in r["output_lens"] if n > 0)
    # a looser gate passes the same run
    p2, _ = bench(s.url, tmp_path, "--num-prompts", "50", "--max-concurrency", "10", "--no-probe",
                  "--max-failed-fraction", "0.9")
    assert p2.returncode == 0


def test_missing_usage_is_a_failure(sim, tmp_path):
    s = sim(*FAST, "--omit-usage")
    p, r = bench(s.url, tmp_path, "--num-prompts", "5", "--no-probe")
    assert p.returncode == 2 and r["infersweep"]["errors"] == {"missing_usage": 5}
    p, _ = bench(s.url, tmp_path, "--num-prompts", "5")
    assert p.returncode == 1 and "missing_usage" in p.stderr  # the probe catches it up front


def test_hanging_stream_times_out_and_dropped_connection_is_classified(sim, tmp_path):
    s = sim(*FAST, "--hang-rate", "0.5", "--drop-rate", "0.5", "--fault-seed", "1")
    p, r = bench(s.url, tmp_path, "--num-prompts", "8", "--max-concurrency", "8", "--no-probe",
                 "--idle-timeout", "1")
    assert p.returncode == 2
    errs = r["infersweep"]["errors"]
    assert set(errs) == {"timeout", "connection.closed"} and sum(errs.values()) == 8


def test_unreachable_server_is_a_clear_error(tmp_path):
    port = free_port()
    p, r = bench(f"http://127.0.0.1:{port}", tmp_path, "--num-prompts", "3",
                 "--ready-timeout", "1")
    assert p.returncode == 1 and r is None
    assert "not ready" in p.stderr and "Traceback" not in p.stderr
    p, r = bench(f"http://127.0.0.1:{port}", tmp_path, "--num-prompts", "3", "--no-probe")
    assert p.returncode == 2 and r["infersweep"]["errors"] == {"connect_error": 3}


def test_bad_flags_are_clear_errors(tmp_path):
    p, _ = bench("http://127.0.0.1:9", tmp_path, "--num-prompts", "0")
    assert p.returncode == 2 and "--num-prompts" in p.stderr  # refused when parsed
    p, _ = bench("http://127.0.0.1:9", tmp_path, "--random-range-ratio", "2")
    assert p.returncode == 2 and "0<x<=1" in p.stderr
    assert "Traceback" not in p.stderr


def test_context_limit_rejections_are_counted(sim, tmp_path):
    s = sim(*FAST, "--max-model-len", "70")
    p, r = bench(s.url, tmp_path, "--num-prompts", "6", "--no-probe")
    assert p.returncode == 2 and r["infersweep"]["errors"] == {"http_4xx": 6}
    metrics = s.get("/metrics").decode()
    assert "infersweep_sim_requests_rejected_total" in metrics


def test_server_dying_mid_run(sim, tmp_path):
    s = sim("--fixed-ttft-ms", "5", "--fixed-itl-ms", "20")
    cmd = [sys.executable, "-m", "infersweep", "bench", "serve", "--base-url", s.url, "--model", "m",
           "--random-input-len", "16", "--random-output-len", "50", "--num-prompts", "40",
           "--max-concurrency", "4", "--save-result", "--result-dir", str(tmp_path),
           "--result-filename", "res.json"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    end = time.monotonic() + 60
    while json.loads(s.get("/debug/stats"))["success"] < 6:  # probe + a few measured requests
        assert time.monotonic() < end and proc.poll() is None
        time.sleep(0.1)
    s.stop()
    out, err = proc.communicate(timeout=60)
    r = json.loads((tmp_path / "res.json").read_text())
    assert proc.returncode == 2
    assert 0 < r["completed"] < 40 and r["completed"] + r["failed"] == 40
    assert set(r["infersweep"]["errors"]) <= {"connection.closed", "connect_error"}


def test_2p1d_cluster_through_router(sim, tmp_path):
    c = sim("--prefill-tps", "200000", "--decode-base-ms", "2", "--kv-base-ms", "1",
            "--topology", "2p1d", cmd="cluster")
    p, r = bench(c.url, tmp_path, "--num-prompts", "24", "--max-concurrency", "8",
                 "--random-range-ratio", "0.8")
    assert p.returncode == 0, p.stderr
    assert r["completed"] == 24
    truth = [json.loads(x) for x in c.get("/debug/timings").splitlines()]
    assert {t["prefill"] for t in truth} == {f"http://127.0.0.1:{c.port + 1}",
                                             f"http://127.0.0.1:{c.port + 2}"}


@pytest.mark.skipif(not GSM8K.is_file(), reason="GSM8K data (../shared/data/gsm8k) not present")
def test_eval_mode_answers_gsm8k_with_set_accuracy(sim):
    s = sim(*FAST, "--eval-answer-key", str(GSM8K), "--eval-accuracy", "0.8")
    rows = [json.loads(x) for x in GSM8K.read_text().splitlines()[:200]]
    right = 0
    for row in rows:
        prompt = f"Question: {row['question']}\nEnd your response with #### [number]\nAnswer:"
        body = json.dumps({"model": "m", "messages": [{"role": "user", "content": prompt}],
                           "max_completion_tokens": 5376, "temperature": 0}).encode()
        req = urllib.request.Request(s.url + "/v1/chat/completions", data=body,
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as resp:
            text = json.loads(resp.read())["choices"][0]["message"]["content"]
        right += text.rsplit("#### ", 1)[1].strip() == row["answer"].rsplit("#### ", 1)[1].strip()
    assert 0.7 <= right / len(rows) <= 0.9  # 80 % over the full 1,319; a 200 sample is near it
