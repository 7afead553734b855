"""`infersweep eval gsm8k|check|collect` against the simulator's GSM8K answer mode (real
processes, real HTTP), and against a misbehaving engine double for malformed answers."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from infersweep.evals import dataset
from tests.integration.broken_engine import SSE_HEAD, BrokenEngine, chunked, event
from tests.integration.simharness import FAST

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
SHARED_GSM8K = REPO.parent / "shared" / "data" / "gsm8k"
THRESHOLDS = REPO / "configs" / "eval-thresholds.yaml"
LIMIT = 200  # questions per eval here (the full 1,319 run is benchmarks/perf/eval_speed.py)


@pytest.fixture(scope="module")
def gsm8k(tmp_path_factory) -> tuple[Path, Path]:
    """The standard test and train splits where present, else a set written here."""
    test, train = SHARED_GSM8K / "test.jsonl", SHARED_GSM8K / "train.jsonl"
    if test.is_file() and train.is_file():
        return test, train
    return dataset.write(tmp_path_factory.mktemp("gsm8k"), n_test=LIMIT, n_train=50)


def infersweep(*args, timeout: float = 300, cwd: Path | None = None
               ) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "infersweep", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout, cwd=cwd)


def eval_gsm8k(url: str, out: Path, data, *extra, cwd: Path | None = None
               ) -> subprocess.CompletedProcess:
    test, train = data
    return infersweep("eval", "gsm8k", "--base-url", url, "--model", "m", "--output-dir", out,
                      "--test-file", test, "--train-file", train, "--limit", LIMIT,
                      "--concurrency", 32, "--no-progress", *extra, cwd=cwd)


def no_traceback(p: subprocess.CompletedProcess) -> None:
    assert "Traceback" not in p.stdout + p.stderr, p.stderr[-3000:]


@pytest.fixture(scope="module")
def seed_row(tmp_path_factory) -> Path:
    p = infersweep("matrix", "test-config", "--config-keys", "dsv4-fp4-mi355x-atom-disagg")
    assert p.returncode == 0, p.stderr
    path = tmp_path_factory.mktemp("row") / "row.json"
    path.write_text(json.dumps(json.loads(p.stdout)[0]))
    return path


def manifest(tmp: Path, attempt: int) -> Path:
    path = tmp / f"manifest-{attempt}.json"
    path.write_text(json.dumps({"provenance": {
        "config-key": "dsv4-fp4-mi355x-atom-disagg", "image": "rocm/atom-dev:nightly",
        "srt-slurm-commit": None, "atom-revision": None, "executor": "local", "job-id": "7",
        "job-state": "COMPLETED", "job-reason": None, "run-id": "run-1", "attempt": attempt,
        "collected": "2026-01-01T00:00:00Z"}}))
    return path


@pytest.mark.parametrize(("accuracy", "api", "expected"),
                         [(0.96, "completions", 0), (0.85, "chat", 1)])
def test_check_passes_at_96_and_fails_at_85_for_dsv4(sim, gsm8k, tmp_path, seed_row, accuracy,
                                                      api, expected):
    server = sim("--eval-answer-key", gsm8k[0], "--eval-accuracy", str(accuracy), *FAST)
    out = tmp_path / "ev"
    # run where a job runs, outside any repository: lm-eval's own `git describe` stays quiet
    p = eval_gsm8k(server.url, out, gsm8k, "--api", api, "--row", seed_row, "--manifest",
                   manifest(tmp_path, 1), cwd=tmp_path)
    no_traceback(p)
    assert p.returncode == 0, p.stderr[-3000:]
    assert "not a git repository" not in p.stderr, p.stderr[-3000:]
    summary = json.loads((out / "eval.json").read_text())
    assert summary["api"] == api and summary["n-samples"] == LIMIT
    assert summary["max-completion-tokens"] == 5376 and summary["num-fewshot"] == 5
    assert summary["provenance"]["model-prefix"] == "dsv4"
    strict = summary["scores"]["strict-match"]["exact_match"]
    flex = summary["scores"]["flexible-extract"]["exact_match"]
    assert abs(strict - accuracy) < 0.05 and abs(flex - accuracy) < 0.05

    audit = tmp_path / "audit.jsonl"
    c = infersweep("eval", "check", out, "--scope", "local", "--thresholds", THRESHOLDS,
                   "--audit", audit)
    no_traceback(c)
    assert c.returncode == expected, c.stdout
    assert "threshold 0.91 (models.dsv4)" in c.stdout
    rows = [json.loads(line) for line in audit.read_text().splitlines()]
    assert len(rows) == LIMIT
    assert sum(r["strict-match"]["correct"] for r in rows) == round(strict * LIMIT)
    assert all(r["strict-match"]["correct"] == r["strict-match"]["saved_correct"] for r in rows)
    assert all(r["request_ok"] and r["non_empty"] for r in rows)
    if expected:
        assert "strict-match" in c.stdout and "is below the threshold 0.91" in c.stdout
    # the first prompt is 5-shot: five solved examples before the question asked
    sample = json.loads((out / "samples.jsonl").read_text().splitlines()[0])
    prompt = sample["prompt"] if api == "completions" else json.loads(sample["prompt"])
    assert str(prompt).count("####") == 5
    assert set(sample["extracted"]) == {"strict-match", "flexible-extract"}

    col = tmp_path / "evals.json"
    r = infersweep("eval", "collect", tmp_path, "-o", col)
    assert r.returncode == 0, r.stderr
    (row,) = json.loads(col.read_text())["evals"]
    assert row["config-key"] == "dsv4-fp4-mi355x-atom-disagg" and row["run-id"] == "run-1"
    assert row["attempt"] == 1 and len(row["recipe-fingerprint"]) == 64
    assert row["image"] == "rocm/atom-dev:nightly"
    assert row["parallelism"]["prefill"]["tp"] == 8 and row["em-strict"] == strict


def test_stalled_requests_are_counted_retries_and_the_run_completes(sim, gsm8k, tmp_path):
    server = sim("--eval-answer-key", gsm8k[0], "--eval-accuracy", "0.96", "--hang-rate",
                 "0.03", "--fault-seed", "5", *FAST)
    out = tmp_path / "ev"
    p = eval_gsm8k(server.url, out, gsm8k, "--idle-timeout", "1", "--retry-backoff", "0.05")
    no_traceback(p)
    assert p.returncode == 0, p.stderr[-3000:]
    q = json.loads((out / "eval.json").read_text())["requests"]
    assert q["failed"] == 0 and q["ok"] == LIMIT
    assert q["retries"] >= 1 and q["retried-requests"] >= 1
    assert q["failed-attempts"]["timeout"] == q["retries"]
    assert q["retry-time-s"] >= q["retries"] * 1.0  # each stall waited out the idle timeout
    assert (f"{q['retries']} retries on {q['retried-requests']} requests ({q['retries']} "
            "stalled or timed out") in p.stdout
    retried = [json.loads(x) for x in (out / "samples.jsonl").read_text().splitlines()]
    retried = [s for s in retried if s["request"]["retries"]]
    assert len(retried) == q["retried-requests"]
    assert all("stalled" in s["request"]["attempts"][0]["error"] for s in retried)
    c = infersweep("eval", "check", out, "--scope", "local", "--thresholds", THRESHOLDS,
                   "--model-prefix", "dsv4")
    assert c.returncode == 0, c.stdout


def test_a_stopped_run_resumes_sending_only_what_is_missing(sim, gsm8k, tmp_path):
    flaky = sim("--eval-answer-key", gsm8k[0], "--eval-accuracy", "0.96", "--fail-rate",
                "0.1", "--fault-seed", "2", *FAST)
    out = tmp_path / "ev"
    first = eval_gsm8k(flaky.url, out, gsm8k, "--max-attempts", "1")
    no_traceback(first)
    assert first.returncode == 1 and "requests failed after 1 attempts" in first.stderr
    q1 = json.loads((out / "eval.json").read_text())["requests"]
    assert q1["failed"] > 0 and q1["failures"] == {"http_5xx": q1["failed"]}
    c = infersweep("eval", "check", out, "--scope", "local", "--thresholds", THRESHOLDS)
    assert c.returncode == 1 and "request failed (http_5xx" in c.stdout

    healthy = sim("--eval-answer-key", gsm8k[0], "--eval-accuracy", "0.96", *FAST)
    again = eval_gsm8k(healthy.url, out, gsm8k)
    assert again.returncode == 0, again.stderr[-3000:]
    q2 = json.loads((out / "eval.json").read_text())["requests"]
    assert q2["resumed"] == q1["ok"] and q2["failed"] == 0
    stats = json.loads(healthy.get("/debug/stats"))
    assert stats["requests"] == q1["failed"]
    assert infersweep("eval", "check", out, "--scope", "local", "--thresholds",
                      THRESHOLDS).returncode == 0


def _malformed(kind: str):
    if kind == "http-400":
        msg = b'{"object":"error","message":"bad request","code":400}'
        return [b"HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\n"
                b"Content-Length: %d\r\n\r\n%b" % (len(msg), msg)]
    if kind == "text-null":
        body = [event('{"choices":[{"index":0,"text":null,"finish_reason":null}]}'),
                event('{"choices":[],"usage":{"prompt_tokens":8,"completion_tokens":1}}')]
    else:  # text of the wrong type
        body = [event('{"choices":[{"index":0,"text":42}]}')]
    return [SSE_HEAD + chunked(*body, event("[DONE]")) + b"0\r\n\r\n"]


@pytest.mark.parametrize(("kind", "cls", "retries"),
                         [("text-null", "eval.empty_response", 5),
                          ("text-number", "protocol.bad_field", 5),
                          ("http-400", "http_4xx", 0)])  # a refused request is not retried
def test_a_malformed_answer_is_a_named_failure_not_a_wrong_answer(gsm8k, tmp_path, kind, cls,
                                                                  retries):
    out = tmp_path / "ev"
    with BrokenEngine(_malformed(kind)) as engine:
        test, train = gsm8k
        p = infersweep("eval", "gsm8k", "--base-url", engine.url, "--model", "m", "--output-dir",
                       out, "--test-file", test, "--train-file", train, "--limit", 5,
                       "--max-attempts", 2, "--retry-backoff", "0", "--no-progress")
    no_traceback(p)
    assert p.returncode == 1
    q = json.loads((out / "eval.json").read_text())["requests"]
    assert q["failures"] == {cls: 5} and q["retries"] == retries
    c = infersweep("eval", "check", out, "--scope", "local", "--thresholds", THRESHOLDS)
    assert c.returncode == 1
    assert c.stdout.count(f"request failed ({cls}") == 5 and "not a wrong answer" in c.stdout
