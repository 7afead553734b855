"""Malformed responses from a real (broken) server fail a request at once, with a named class.

Each case: the bytes a broken engine sends, the failure class the client must report, and a
time bound far below any timeout. After its bytes each server keeps the connection open and
silent (unless the case is about closing), so only an immediate failure meets the bound.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import subprocess
import sys
import time

import pytest

from infersweep.bench import probe
from infersweep.bench.failures import Failure
from infersweep.bench.httpconn import ArrivalClock, HTTPError, Pool, build_head
from infersweep.bench.stream import StreamSink
from infersweep.diagnostics import InputError
from tests.integration.broken_engine import (
    CLOSE,
    END,
    HANG,
    SSE_HEAD,
    BrokenEngine,
    chunked,
    event,
    good_stream,
)

pytestmark = pytest.mark.integration

BOUND_S = 2.0  # every case must fail well within this (the idle timeout defaults to 600 s)
C = '{"index":0,"text":"w"}'
USAGE_OK = '"usage":{"prompt_tokens":8,"completion_tokens":1}'


def sse(*events: str | bytes, end: bool = False) -> bytes:
    return SSE_HEAD + chunked(*(event(e) for e in events)) + (END if end else b"")


# (id, scripted response, chat, expected class)
CASES = [
    ("choices-a-string", [sse('{"choices":"abc"}'), HANG], False, Failure.BAD_FIELD),
    ("choices-not-objects", [sse('{"choices":["w"]}'), HANG], False, Failure.BAD_FIELD),
    ("choices-an-object", [sse('{"choices":{"text":"w"}}'), HANG], False, Failure.BAD_FIELD),
    ("usage-tokens-a-string",
     [sse('{"choices":[' + C + '],"usage":{"completion_tokens":"1"}}'), HANG], False,
     Failure.BAD_FIELD),
    ("usage-a-list", [sse('{"choices":[' + C + '],"usage":[1]}'), HANG], False, Failure.BAD_FIELD),
    ("delta-content-a-number",
     [sse('{"choices":[{"index":0,"delta":{"content":5}}]}'), HANG], True, Failure.BAD_FIELD),
    ("delta-a-string", [sse('{"choices":[{"index":0,"delta":"w"}]}'), HANG], True,
     Failure.BAD_FIELD),
    ("text-a-list", [sse('{"choices":[{"index":0,"text":["w"]}]}'), HANG], False,
     Failure.BAD_FIELD),
    ("invalid-json", [sse("{not json"), HANG], False, Failure.BAD_JSON),
    ("json-not-an-object", [sse("[1, 2]"), HANG], False, Failure.BAD_JSON),
    ("json-not-utf8", [sse(b'{"choices":[{"text":"\xff"}]}'), HANG], False, Failure.BAD_JSON),
    ("content-length-not-a-number",
     [b"HTTP/1.1 200 OK\r\nContent-Length: abc\r\n\r\n", HANG], False, Failure.BAD_HEADER),
    ("content-length-negative",
     [b"HTTP/1.1 200 OK\r\nContent-Length: -5\r\n\r\n", HANG], False, Failure.BAD_HEADER),
    ("content-length-conflicting",
     [b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n", HANG], False,
     Failure.BAD_HEADER),
    ("header-without-colon",
     [b"HTTP/1.1 200 OK\r\nTransfer-Encoding chunked\r\n\r\n", HANG], False, Failure.BAD_HEADER),
    ("transfer-encoding-gzip",
     [b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", HANG], False,
     Failure.BAD_HEADER),
    ("head-never-ends", [b"HTTP/1.1 200 OK\r\n" + b"X-Pad: " + b"a" * 70000, HANG], False,
     Failure.BAD_HEADER),
    ("chunk-size-not-hex", [SSE_HEAD + b"zz\r\n", HANG], False, Failure.BAD_CHUNK),
    ("chunk-size-0x-prefix", [SSE_HEAD + b"0x10\r\n", HANG], False, Failure.BAD_CHUNK),
    ("chunk-longer-than-its-size", [SSE_HEAD + b"2\r\nabcdef\r\n", HANG], False,
     Failure.BAD_CHUNK),
    ("chunk-size-line-never-ends", [SSE_HEAD + b"1" * 5000, HANG], False, Failure.BAD_CHUNK),
    ("status-line-not-http", [b"SSH-2.0-OpenSSH_9.6\r\n", HANG], False, Failure.BAD_STATUS),
    ("status-http2", [b"HTTP/2 200\r\n\r\n", HANG], False, Failure.BAD_STATUS),
    ("status-code-not-digits", [b"HTTP/1.1 2OO OK\r\n\r\n", HANG], False, Failure.BAD_STATUS),
    ("tls-answer-to-plain-http", [b"\x15\x03\x03\x00\x02\x02\x46", HANG], False,
     Failure.BAD_STATUS),
    ("closed-mid-body", [sse('{"choices":[' + C + ']}'), CLOSE], False,
     Failure.CONNECTION_CLOSED),
    ("closed-mid-head", [b"HTTP/1.1 200 OK\r\nContent-Type: te", CLOSE], False,
     Failure.CONNECTION_CLOSED),
    ("closed-before-answer", [CLOSE], False, Failure.CONNECTION_CLOSED),
    ("closed-short-of-content-length",
     [b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\ndata: ", CLOSE], False,
     Failure.CONNECTION_CLOSED),
]
IDS = [c[0] for c in CASES]


async def one_request(url_port: int, chat: bool) -> tuple[str, str, float]:
    """What a worker does for one request: pool, request, sink, finish."""
    pool = Pool("127.0.0.1", url_port, clock=ArrivalClock("auto"))
    sink = StreamSink(chat=chat, keep_text=True)
    body = b'{"model":"m","prompt":[1,2],"stream":true}'
    t0 = time.monotonic()
    conn = await pool.acquire()
    try:
        await asyncio.wait_for(conn.request(
            build_head("POST", "127.0.0.1", url_port, "/v1/completions", len(body)), body, sink),
            BOUND_S * 5)
        sink.finish()
    except HTTPError as exc:
        if not sink.error_class:
            sink.error_class, sink.error = exc.error_class, str(exc)
    finally:
        conn.close()
    return sink.error_class, sink.error, time.monotonic() - t0


@pytest.mark.parametrize(("name", "script", "chat", "expected"), CASES, ids=IDS)
def test_request_fails_at_once_with_its_class(name, script, chat, expected):
    with BrokenEngine(script) as engine:
        cls, msg, elapsed = asyncio.run(one_request(engine.port, chat))
    assert cls == expected, msg
    assert msg and "\n" not in msg
    assert elapsed < BOUND_S, f"{name}: took {elapsed:.2f}s"


@pytest.mark.parametrize(("name", "script", "chat", "expected"), CASES, ids=IDS)
def test_probe_reports_the_class_and_does_not_crash(name, script, chat, expected):
    with BrokenEngine(script) as engine:
        t0 = time.monotonic()
        with pytest.raises(InputError) as ei:
            probe.test_request(engine.url + "/v1/completions", b"{}", chat, {}, timeout=10)
        elapsed = time.monotonic() - t0
    assert f"[{expected}]" in str(ei.value)
    assert elapsed < BOUND_S


def _pings_forever(_i):
    yield SSE_HEAD
    for _ in itertools.count():
        yield chunked(b": ping\n\n")
        yield 0.05


def test_probe_has_an_overall_deadline_against_endless_keepalive_comments():
    with BrokenEngine(_pings_forever, health=_pings_forever(0)) as engine:
        t0 = time.monotonic()
        with pytest.raises(InputError) as ei:
            probe.test_request(engine.url + "/v1/completions", b"{}", False, {}, timeout=1.0)
        assert "[timeout]" in str(ei.value)
        assert time.monotonic() - t0 < 1.0 + BOUND_S
        t0 = time.monotonic()
        with pytest.raises(InputError) as ei:  # /health itself pings forever
            probe.wait_ready(engine.url, timeout=1.0)
        assert "not ready" in str(ei.value) and "timeout" in str(ei.value)
        assert time.monotonic() - t0 < 1.0 + BOUND_S


@pytest.mark.parametrize("health", [
    [b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n", HANG],
    [b"garbage\r\n", HANG],
    [b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nq\r\n", HANG],
], ids=["bad-content-length", "not-http", "bad-chunk"])
def test_readiness_poll_survives_a_malformed_health_answer(health):
    with BrokenEngine([HANG], health=health) as engine:
        t0 = time.monotonic()
        with pytest.raises(InputError) as ei:
            probe.wait_ready(engine.url, timeout=1.0)
        assert "protocol." in str(ei.value)
        assert time.monotonic() - t0 < 1.0 + BOUND_S


def bench(url: str, tmp, *args: str, timeout: float = 60):
    cmd = [sys.executable, "-m", "infersweep", "bench", "serve", "--base-url", url, "--model", "m",
           "--random-input-len", "8", "--random-output-len", "2", "--save-result",
           "--result-dir", str(tmp), "--result-filename", "res.json", "--no-probe",
           "--disable-tqdm", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


RUN_CASES = [c for c in CASES if c[0] in (
    "choices-not-objects", "content-length-not-a-number", "invalid-json", "chunk-size-not-hex",
    "status-line-not-http", "closed-mid-body", "delta-content-a-number")]


@pytest.mark.parametrize(("name", "script", "chat", "expected"), RUN_CASES,
                         ids=[c[0] for c in RUN_CASES])
def test_bench_serve_counts_each_class_and_records_it(name, script, chat, expected, tmp_path):
    with BrokenEngine(script) as engine:
        t0 = time.monotonic()
        p = bench(engine.url, tmp_path, "--num-prompts", "3", "--max-concurrency", "3",
                  "--save-detailed", *(["--backend", "openai-chat"] if chat else []))
        elapsed = time.monotonic() - t0
    assert p.returncode == 2, p.stderr
    assert "Traceback" not in p.stderr + p.stdout
    assert elapsed < 30  # default --idle-timeout is 600 s
    r = json.loads((tmp_path / "res.json").read_text())
    assert r["infersweep"]["errors"] == {str(expected): 3}
    recs = [json.loads(x) for x in (tmp_path / "res.records.jsonl").read_text().splitlines()[1:]]
    assert len(recs) == 3 and {x["error_class"] for x in recs} == {str(expected)}
    assert all(x["error"] for x in recs)


def test_one_odd_field_with_save_detailed_keeps_every_record(tmp_path):
    """One response has a number where text belongs: that request fails, the rest are kept."""
    def script(i):
        if i == 1:
            return [SSE_HEAD + chunked(event('{"choices":[{"index":0,"delta":{"content":7}}]}'),
                                       event('{"choices":[],' + USAGE_OK + '}')) + END]
        return [good_stream(chat=True)]

    with BrokenEngine(script) as engine:
        p = bench(engine.url, tmp_path, "--backend", "openai-chat", "--num-prompts", "4",
                  "--max-concurrency", "1", "--save-detailed", "--max-failed-fraction", "0.5")
    assert p.returncode == 0, p.stderr
    assert "Traceback" not in p.stderr
    r = json.loads((tmp_path / "res.json").read_text())
    assert r["completed"] == 3 and r["failed"] == 1
    assert r["infersweep"]["errors"] == {"protocol.bad_field": 1}
    assert r["generated_texts"] == ["ww"] * 3
    assert len(r["errors"]) == 1 and "delta.content" in r["errors"][0]
    recs = (tmp_path / "res.records.jsonl").read_text().splitlines()[1:]
    assert len(recs) == 4
