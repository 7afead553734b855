"""The eval transport gives up on a bad stream within seconds, and says why: a server that
trickles bytes without ever completing a stream event is a stall (retried, then failed); one
that streams past ``max_completion_tokens`` (tokens, usage counts or bytes that are no
answer) is cut at its cap and failed at once, never waited out to the attempt's timeout."""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import subprocess
import sys
import time

import pytest

from infersweep.evals import dataset
from infersweep.evals.answercap import TOO_LONG, AnswerLimits
from infersweep.evals.transport import Endpoint, EvalTransport, RetryPolicy
from tests.integration.broken_engine import SSE_HEAD, BrokenEngine, chunked, event

pytestmark = pytest.mark.integration

MAX_TOKENS = 50
TOKEN = event('{"choices":[{"index":0,"text":" 7"}]}')


def trickle(head_too: bool = False):
    """One byte every 50 ms, forever: the head (optionally) and then token events."""
    def script(_i):
        if not head_too:
            yield SSE_HEAD
        for byte in itertools.cycle(SSE_HEAD if head_too else chunked(TOKEN)):
            yield bytes([byte])
            yield 0.05
    return script


def endless(piece: bytes | None = None, usage: bool = False):
    """A stream that never ends: token events (with a running usage count), or ``piece``."""
    def script(_i):
        yield SSE_HEAD
        for n in itertools.count(1):
            if piece is not None:
                yield chunked(piece)
            elif usage:
                yield chunked(event(json.dumps({"choices": [{"index": 0, "text": " 7"}],
                                                "usage": {"prompt_tokens": 9,
                                                          "completion_tokens": n}})))
            else:
                yield chunked(TOKEN)
            if n % 64 == 0:
                yield 0.001  # let the client's reads interleave
    return script


def send(engine: BrokenEngine, idle: float = 0.5, attempts: int = 2) -> tuple[dict, float]:
    ep = Endpoint("127.0.0.1", engine.port, "/v1/completions", chat=False)
    policy = RetryPolicy(max_attempts=attempts, request_timeout=60, idle_timeout=idle,
                         backoff=0)
    body = json.dumps({"model": "m", "prompt": "Question: 1+1?\nAnswer:", "stream": True,
                       "max_tokens": MAX_TOKENS}).encode()

    async def go():
        async with EvalTransport(ep, policy, AnswerLimits(MAX_TOKENS)) as tr:
            return await tr.send(body)

    t0 = time.monotonic()
    answer = asyncio.run(go())
    return answer.record(), time.monotonic() - t0


@pytest.mark.parametrize(("head_too", "why"), [
    (False, "stalled: bytes trickled in"), (True, "stalled: bytes trickled in")])
def test_a_trickling_server_is_a_stall_cut_at_the_idle_timeout(head_too, why):
    with BrokenEngine(trickle(head_too)) as engine:
        rec, took = send(engine, idle=0.5, attempts=2)
    assert not rec["ok"] and rec["error_class"] == "timeout"
    assert why in rec["error"] and "--idle-timeout 0.5s" in rec["error"], rec["error"]
    assert len(rec["attempts"]) == 2  # a stall is retried, like silence
    assert took < 4, took


@pytest.mark.parametrize(("script", "said"), [
    (endless(), "tokens, past max_completion_tokens 50 (allowed up to 82)"),
    (endless(usage=True), "tokens, past max_completion_tokens 50 (allowed up to 82)"),
    (endless(b": keep-alive\n\n"), "the response body passed 149,504 bytes"),
    (endless(event('{"choices":[{"index":0,"text":""}]}')), "the response body passed"),
])
def test_an_endless_stream_is_cut_at_its_cap_and_not_retried(script, said):
    with BrokenEngine(script) as engine:
        rec, took = send(engine, idle=5, attempts=3)
    assert not rec["ok"] and rec["error_class"] == TOO_LONG
    assert "stopped reading: " in rec["error"] and said in rec["error"], rec["error"]
    ran = re.search(r"the answer ran to (\d+) tokens", rec["error"])
    assert ran is None or 82 < int(ran[1]) <= 82 + 64  # cut at the read that passed the cap
    assert rec["retries"] == 0  # at temperature 0 the same request streams the same way
    assert took < 3, took


def test_an_answer_within_its_cap_is_read_whole():
    good = [SSE_HEAD + chunked(*[TOKEN] * MAX_TOKENS,
                               event('{"choices":[],"usage":{"prompt_tokens":9,'
                                     f'"completion_tokens":{MAX_TOKENS}}}}}'),
                               event("[DONE]")) + b"0\r\n\r\n"]
    with BrokenEngine(good) as engine:
        rec, _ = send(engine)
    assert rec["ok"] and rec["text"] == " 7" * MAX_TOKENS and rec["output_tokens"] == MAX_TOKENS


@pytest.mark.parametrize(("script", "cls", "said", "attempts"), [
    (trickle(), "timeout", "stalled: bytes trickled in", 2),
    (endless(), TOO_LONG, "past max_completion_tokens 50", 1),
])
def test_eval_gsm8k_reports_the_cut_request_as_failed_with_its_reason(tmp_path, script, cls,
                                                                       said, attempts):
    test, train = dataset.write(tmp_path / "gsm8k", n_test=2, n_train=10)
    out = tmp_path / "ev"
    with BrokenEngine(script) as engine:
        p = subprocess.run(
            [sys.executable, "-m", "infersweep", "eval", "gsm8k", "--base-url", engine.url,
             "--model", "m", "--output-dir", str(out), "--test-file", str(test),
             "--train-file", str(train), "--max-completion-tokens", str(MAX_TOKENS),
             "--idle-timeout", "0.5", "--max-attempts", "2", "--retry-backoff", "0",
             "--no-progress"], capture_output=True, text=True, timeout=300)
    assert "Traceback" not in p.stderr
    assert p.returncode == 1 and "2 requests failed" in p.stderr, p.stderr[-2000:]
    q = json.loads((out / "eval.json").read_text())["requests"]
    assert q["failures"] == {cls: 2}
    for line in (out / "samples.jsonl").read_text().splitlines():
        req = json.loads(line)["request"]
        assert req["ok"] is False and said in req["error"] and len(req["attempts"]) == attempts
        # each attempt was cut within seconds (the old defaults held one for 30 minutes)
        assert all(a["duration_s"] < 3 for a in req["attempts"]), req["attempts"]
