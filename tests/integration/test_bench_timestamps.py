"""Kernel receive timestamps on real loopback TCP, against the simulator."""

from __future__ import annotations

import asyncio
import sys
import time

import orjson
import pytest

from infersweep.bench.httpconn import ArrivalClock, Pool, build_head
from infersweep.bench.stream import StreamSink
from tests.integration.simharness import FAST, Sim, bench

pytestmark = pytest.mark.integration
LINUX = sys.platform.startswith("linux")


@pytest.fixture
def server():
    s = Sim(*FAST)
    yield s
    s.stop()


async def _stream(port: int, mode: str, n: int = 3):
    clock = ArrivalClock(mode)
    pool = Pool("127.0.0.1", port, clock=clock)
    body = orjson.dumps({"model": "m", "prompt": [1, 2, 3, 4], "max_tokens": 12,
                         "ignore_eos": True, "stream": True,
                         "stream_options": {"include_usage": True}})
    head = build_head("POST", "127.0.0.1", port, "/v1/completions", len(body))
    out = []
    for _ in range(n):  # sequential requests: the same keep-alive connection is reused
        sink = StreamSink()
        conn = await pool.acquire()
        sent = time.monotonic_ns()
        await asyncio.wait_for(conn.request(head, body, sink), 60)
        after = time.monotonic_ns()
        pool.release(conn)
        sink.finish()
        out.append((sent, sink, after))
    opened = pool.opened
    pool.close()
    return clock, out, opened


@pytest.mark.parametrize("mode", ["auto", "user"])
def test_chunks_are_stamped_on_arrival(server, mode):
    clock, out, opened = asyncio.run(_stream(server.port, mode))
    assert opened == 1
    expect = "kernel" if (LINUX and mode == "auto") else "user"
    assert clock.source() == expect
    prev = 0
    for sent, sink, after in out:
        assert not sink.error_class, sink.error
        assert len(sink.chunk_t) == 12 and sink.usage_out == 12
        # arrival times sit between the request's send and the end of the exchange, and never
        # go backwards
        assert sent <= sink.t_headers <= sink.chunk_t[0]
        assert sink.chunk_t == sorted(sink.chunk_t) and sink.chunk_t[-1] <= after
        assert sink.t_headers >= prev
        prev = sink.chunk_t[-1]
    if expect == "kernel":
        assert clock.kernel_reads > 0 and len(clock.delays) == clock.kernel_reads
        assert all(d >= 0 for d in clock.delays)


def test_result_records_the_timestamp_source(server, tmp_path):
    p, r = bench(server.url, tmp_path, "--num-prompts", "8", "--max-concurrency", "4")
    assert p.returncode == 0, p.stderr
    src = r["infersweep"]["timestamp_source"]
    assert src == ("kernel" if LINUX else "user")
    ts = r["infersweep"]["client"]["timestamps"]
    assert ts["source"] == src and ts["kernel_reads"] + ts["user_reads"] > 0
    p, r = bench(server.url, tmp_path, "--num-prompts", "8", "--max-concurrency", "4",
                 "--timestamp-source", "user")
    assert p.returncode == 0, p.stderr
    assert r["infersweep"]["timestamp_source"] == "user"


def test_pool_resolves_a_host_name_once_and_tries_each_address(server):
    async def go():
        pool = Pool("localhost", server.port)
        conns = await asyncio.gather(*(pool.acquire() for _ in range(8)))
        addrs = pool._addrs
        for c in conns:
            c.close()
        return pool.opened, addrs

    opened, addrs = asyncio.run(go())
    assert opened == 8 and addrs  # ::1 first (refused) falls through to 127.0.0.1
