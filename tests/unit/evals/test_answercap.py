"""The eval client's answer caps and progress clock, fed bytes directly."""

from __future__ import annotations

import json

import pytest

from infersweep.bench.failures import ProtocolError
from infersweep.evals.answercap import TOO_LONG, AnswerLimits, CappedSink
from infersweep.evals.transport import default_request_timeout


def ev(obj) -> bytes:
    return b"data: " + json.dumps(obj).encode() + b"\n\n"


def tok(text=" 7", usage=None, chat=False) -> bytes:
    choice = {"index": 0, "delta": {"content": text}} if chat else {"index": 0, "text": text}
    obj = {"choices": [choice]}
    if usage is not None:
        obj["usage"] = {"prompt_tokens": 3, "completion_tokens": usage}
    return ev(obj)


def sink(max_tokens=50, chat=False) -> CappedSink:
    s = CappedSink(AnswerLimits(max_tokens), chat=chat)
    s.on_headers(200, {}, 1)
    return s


def test_the_limits_leave_a_margin_over_the_requested_tokens():
    assert (AnswerLimits(50).tokens, AnswerLimits(5376).tokens) == (82, 5376 + 538)
    assert AnswerLimits(50).bytes == 64 * 1024 + 82 * 1024
    assert default_request_timeout(5376) == 597.6 and default_request_timeout(512) == 111.2


@pytest.mark.parametrize("chat", [False, True])
def test_an_answer_within_the_margin_is_read(chat):
    s = sink(chat=chat)
    for i in range(82):
        s.on_body(tok(chat=chat), 10 + i)
    s.on_body(ev({"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 82}}), 99)
    s.on_body(b"data: [DONE]\n\n", 100)
    s.finish()
    assert not s.error_class and "".join(s.text) == " 7" * 82


@pytest.mark.parametrize(("feed", "said"), [
    (lambda i: tok(), "the answer ran to 83 tokens"),
    (lambda i: tok(usage=3 * (i + 1)), "the answer ran to 84 tokens"),  # usage counts more
    (lambda i: b": ping\n\n" * 64, "the response body passed 149,504 bytes"),
])
def test_a_stream_past_its_cap_fails_the_request(feed, said):
    s = sink()
    with pytest.raises(ProtocolError) as exc:
        for i in range(100_000):
            s.on_body(feed(i), 10 + i)
    assert exc.value.error_class == s.error_class == TOO_LONG
    assert said in s.error and s.error.startswith("stopped reading: ")


def test_progress_is_a_complete_event_not_a_byte():
    s = sink()
    assert s.progress_t == 1  # the head
    event = tok()
    for i, byte in enumerate(event[:-1]):
        s.on_body(bytes([byte]), 10 + i)
    assert s.progress_t == 1 and s.body_bytes == len(event) - 1
    s.on_body(event[-1:], 500)
    assert s.progress_t == 500
    s.on_body(b": keep-alive\n\n", 600)  # a comment is no progress
    assert s.progress_t == 500
