import asyncio
import contextlib
import errno
import socket
import struct

import pytest

from infersweep.bench import httpconn
from infersweep.bench.httpconn import ArrivalClock, ClientConnection, HTTPError, Sink
from infersweep.bench.runner import merge_timestamps


class FakeSock:
    """Just enough of a socket: records writes, replays scripted reads."""

    def __init__(self, reads=(), send_limit=None):
        self.written = b""
        self.closed = False
        self.reads = list(reads)  # (data, ancdata) or an exception to raise
        self.send_limit = send_limit
        self.opts = {}

    def fileno(self):
        return 99

    def setblocking(self, flag):
        pass

    def setsockopt(self, level, opt, value):
        self.opts[(level, opt)] = value

    def send(self, data):
        n = len(data) if self.send_limit is None else min(self.send_limit, len(data))
        self.written += bytes(data[:n])
        return n

    def _next(self):
        item = self.reads.pop(0)
        if isinstance(item, BaseException):
            raise item
        return item

    def recv(self, size):
        return self._next()[0]

    def recvmsg(self, size, ancsize):
        data, anc = self._next()
        return data, anc, 0, None

    def close(self):
        self.closed = True


class FakeLoop:
    def __init__(self):
        self.readers = {}
        self.writers = {}

    def add_reader(self, fd, cb):
        self.readers[fd] = cb

    def remove_reader(self, fd):
        return self.readers.pop(fd, None) is not None

    def add_writer(self, fd, cb):
        self.writers[fd] = cb

    def remove_writer(self, fd):
        return self.writers.pop(fd, None) is not None

    def create_future(self):
        return asyncio.get_running_loop().create_future()


class Rec(Sink):
    def __init__(self):
        self.status = None
        self.body = b""
        self.times = []

    def on_headers(self, status, headers, t):
        self.status = status
        self.times.append(t)

    def on_body(self, data, t):
        self.body += data
        self.times.append(t)


RESP = (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"5\r\nhello\r\n1;ext=1\r\n \r\nb\r\nworld, ok!!\r\n0\r\n\r\n")


def new_conn(sock=None, clock=None):
    loop = FakeLoop()
    return ClientConnection(sock or FakeSock(), loop, clock), loop


def run_splits(splits):
    async def go():
        conn, _ = new_conn()
        sink = Rec()
        fut = conn.request(b"POST / HTTP/1.1\r\n\r\n", b"", sink)
        pos = 0
        for k, s in enumerate(splits):
            conn.feed(RESP[pos:s], k)
            pos = s
        conn.feed(RESP[pos:], len(splits))
        await fut
        return sink, conn

    return asyncio.run(go())


@pytest.mark.parametrize("step", [1, 2, 3, 7, 1000])
def test_chunked_decoding_any_split(step):
    sink, conn = run_splits(list(range(step, len(RESP), step)))
    assert sink.status == 200
    assert sink.body == b"hello world, ok!!"
    assert conn.reusable


def test_content_length_body_and_keepalive_close():
    async def go():
        conn, loop = new_conn()
        sink = Rec()
        fut = conn.request(b"GET / HTTP/1.1\r\n\r\n", b"", sink)
        conn.feed(b"HTTP/1.1 404 Not Found\r\nContent-Length: 3\r\nConnection: close\r\n\r\nab", 1)
        conn.feed(b"c", 2)
        await fut
        return sink, conn, loop

    sink, conn, loop = asyncio.run(go())
    assert sink.status == 404 and sink.body == b"abc"
    assert conn.sock.closed and not conn.reusable
    assert not loop.readers  # unregistered before the socket was closed


def test_disconnect_mid_body_raises_classified_error():
    async def go():
        sock = FakeSock(reads=[(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel", []),
                               (b"", [])])
        conn, loop = new_conn(sock)
        fut = conn.request(b"GET / HTTP/1.1\r\n\r\n", b"", Rec())
        loop.readers[99]()
        loop.readers[99]()  # EOF
        with pytest.raises(HTTPError) as ei:
            await fut
        return ei.value, conn, loop

    err, conn, loop = asyncio.run(go())
    assert err.error_class == "connection.closed"
    assert conn.closed and conn.sock.closed and not loop.readers


def test_reset_and_eagain_on_read():
    async def go():
        sock = FakeSock(reads=[BlockingIOError(), ConnectionResetError(104, "reset")])
        conn, loop = new_conn(sock)
        fut = conn.request(b"GET / HTTP/1.1\r\n\r\n", b"", Rec())
        loop.readers[99]()  # EAGAIN: nothing happens
        assert not fut.done() and not conn.closed
        loop.readers[99]()
        with pytest.raises(HTTPError) as ei:
            await fut
        return ei.value, conn

    err, conn = asyncio.run(go())
    assert err.error_class == "connection.closed" and "reset" in str(err)
    assert conn.sock.closed


def test_idle_connection_closed_by_server_is_not_reused():
    async def go():
        sock = FakeSock(reads=[(b"", [])])
        conn, loop = new_conn(sock)
        loop.readers[99]()
        return conn

    conn = asyncio.run(go())
    assert conn.closed and not conn.reusable and conn.sock.closed


def test_partial_send_is_finished_when_writable():
    async def go():
        sock = FakeSock(send_limit=4)
        conn, loop = new_conn(sock)
        conn.request(b"POST / HTTP/1.1\r\n\r\n", b"0123456789", Rec())
        assert 99 in loop.writers
        for _ in range(20):
            if 99 not in loop.writers:
                break
            loop.writers[99]()
        return sock, loop

    sock, loop = asyncio.run(go())
    assert sock.written == b"POST / HTTP/1.1\r\n\r\n0123456789"
    assert not loop.writers


def test_garbage_status_line_is_malformed():
    async def go():
        conn, _ = new_conn()
        fut = conn.request(b"GET / HTTP/1.1\r\n\r\n", b"", Rec())
        conn.feed(b"SSH-2.0-OpenSSH\r\n\r\n", 1)
        with pytest.raises(HTTPError) as ei:
            await fut
        return ei.value

    assert asyncio.run(go()).error_class == "protocol.bad_status"


def test_socketpair_round_trip_on_a_real_loop():
    """The real read path (add_reader + recv) against a connected socket pair."""
    async def go():
        a, b = socket.socketpair()
        loop = asyncio.get_running_loop()
        conn = ClientConnection(a, loop, ArrivalClock("user"))
        sink = Rec()
        fut = conn.request(b"GET / HTTP/1.1\r\n\r\n", b"", sink)
        b.sendall(RESP)
        await asyncio.wait_for(fut, 30)
        got = b.recv(1024)
        conn.close()
        b.close()
        return sink, got, conn

    sink, got, conn = asyncio.run(go())
    assert sink.body == b"hello world, ok!!" and got == b"GET / HTTP/1.1\r\n\r\n"
    assert conn.clock.source() == "user"


# -- kernel receive timestamps ----------------------------------------------------------------

def cmsg(sec, frac, typ=35, fmt="@qq", level=socket.SOL_SOCKET):
    return (level, typ, struct.pack(fmt, sec, frac))


def test_parse_timespec_timeval_and_32bit_layouts():
    assert httpconn.parse_timestamp([cmsg(1_700_000_000, 123_456_789)], 35, 1) == \
        1_700_000_000_123_456_789
    assert httpconn.parse_timestamp([cmsg(1_700_000_000, 123_456, typ=29)], 29, 1000) == \
        1_700_000_000_123_456_000
    assert httpconn.parse_timestamp([cmsg(1_700_000_000, 5, fmt="@ii")], 35, 1) == \
        1_700_000_000_000_000_005


def test_parse_ignores_other_messages_and_empty_stamps():
    other = [cmsg(1, 2, typ=36), cmsg(1, 2, level=socket.SOL_SOCKET + 1)]
    assert httpconn.parse_timestamp(other, 35, 1) is None
    assert httpconn.parse_timestamp([], 35, 1) is None
    assert httpconn.parse_timestamp([cmsg(0, 0)], 35, 1) is None
    assert httpconn.parse_timestamp([(socket.SOL_SOCKET, 35, b"\x01\x02")], 35, 1) is None
    assert httpconn.parse_timestamp(other + [cmsg(3, 4)], 35, 1) == 3_000_000_004


def test_realtime_offset_takes_the_tightest_bracket():
    mono = iter([100, 150, 1000, 1004, 5000, 5100])  # brackets of 50, 4 and 100 ns
    real = iter([10_125, 11_001, 15_050])
    off = httpconn.realtime_offset(3, realtime=lambda: next(real), monotonic=lambda: next(mono))
    assert off == 11_001 - 1002


def test_realtime_to_monotonic_conversion():
    c = ArrivalClock("auto")
    c.offset_ns = 1_000_000
    assert c.to_monotonic(5_000_000) == 4_000_000
    # the live offset relates the two clocks (to well within a second on any machine)
    import time
    c.refresh()
    assert abs(c.to_monotonic(time.time_ns()) - time.monotonic_ns()) < 1_000_000_000


@pytest.mark.skipif(httpconn.SO_TIMESTAMPNS is None, reason="no SO_TIMESTAMPNS on this platform")
def test_kernel_stamps_become_arrival_times():
    async def go():
        clock = ArrivalClock("kernel")
        clock.offset_ns = 10**18  # realtime = monotonic + 1e18 (only a shift matters)
        now = httpconn._now()
        rt = [now - 3_000_000 + 10**18, now - 2_000_000 + 10**18]
        sock = FakeSock(reads=[
            (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", [cmsg(*divmod(rt[0], 10**9))]),
            (b"5\r\nhello\r\n", [cmsg(*divmod(rt[1], 10**9))]),
            (b"1\r\n!\r\n", []),  # no stamp on this read: falls back to the user clock
            (b"0\r\n\r\n", [cmsg(*divmod(rt[0], 10**9))]),  # older than the last: held
        ])
        conn, loop = new_conn(sock, clock)
        assert sock.opts[(socket.SOL_SOCKET, httpconn.SO_TIMESTAMPNS)] == 1
        sink = Rec()
        fut = conn.request(b"GET / HTTP/1.1\r\n\r\n", b"", sink)
        for _ in range(4):
            loop.readers[99]()
        await fut
        return sink, clock, now

    sink, clock, now = asyncio.run(go())
    assert sink.body == b"hello!"
    assert sink.times[0] == now - 3_000_000 and sink.times[1] == now - 2_000_000
    assert sink.times[2] >= now  # the user clock, after the read
    assert sink.times == sorted(sink.times)
    assert clock.kernel_reads == 3 and clock.user_reads == 1 and clock.source() == "mixed"
    assert all(d >= 0 for d in clock.delays)


def test_a_stamp_later_than_the_read_is_clamped_to_the_read():
    async def go():
        clock = ArrivalClock("kernel")
        clock.offset_ns = 0
        future_rt = httpconn._now() + 60 * 10**9
        sock = FakeSock(reads=[(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
                                [cmsg(*divmod(future_rt, 10**9))])])
        conn, loop = new_conn(sock, clock)
        sink = Rec()
        fut = conn.request(b"GET / HTTP/1.1\r\n\r\n", b"", sink)
        loop.readers[99]()
        await fut
        return sink, future_rt

    sink, future_rt = asyncio.run(go())
    assert sink.times[0] < future_rt


def test_user_mode_never_asks_for_stamps_and_summaries_merge():
    sock = FakeSock()
    clock = ArrivalClock("user")
    assert clock.enable(sock) is None and not sock.opts
    with pytest.raises(ValueError):
        ArrivalClock("ptp")
    k = ArrivalClock("kernel")
    k.kernel_reads, k.delays = 4, httpconn.array("q", [1000, 2000, 3000, 400_000])
    s = k.summary()
    assert s["source"] == "kernel" and s["read_delay_us"]["max"] == 400.0
    u = {"source": "user", "kernel_reads": 0, "user_reads": 5}
    assert merge_timestamps([s, s])["source"] == "kernel"
    assert merge_timestamps([s, u])["source"] == "mixed"
    assert merge_timestamps([u])["source"] == "user"
    assert merge_timestamps([s, s])["read_delay_us"]["p99"] == s["read_delay_us"]["p99"]


def test_prime_holds_one_stamped_socket_until_closed():
    c = ArrivalClock("auto")
    c.prime()
    if httpconn.kernel_timestamps_available():
        assert c._primer is not None
    c.close()
    assert c._primer is None
    u = ArrivalClock("user")
    u.prime()
    assert u._primer is None


CHUNK_CASES = [
    b"5\r\nhello\r\n", b"1;ext=1\r\n \r\n", b"0\r\n\r\n", b"5\r\nhel", b"5\r\nhello\r\n3\r\nabc\r\n",
    b"5\r\nhello\r\n0\r\n\r\n", b"zz\r\nhello\r\n", b"\r\nhello\r\n", b"5\r\nhelloXY",
    b"5\r\nhello\r", b"a\r\n0123456789\r\n",
]


@pytest.mark.parametrize("wire", CHUNK_CASES)
def test_single_chunk_fast_path_agrees_with_the_general_parser(wire):
    fast = httpconn._single_chunk(wire)
    if fast is None:
        return  # declined: the general parser handles it (covered by the split tests)

    async def go():
        conn, _ = new_conn()
        sink = Rec()
        conn.request(b"GET / HTTP/1.1\r\n\r\n", b"", sink)
        conn._parse(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + wire, 1, sink)
        return sink.body

    assert asyncio.run(go()) == fast


def test_one_whole_chunk_per_read_takes_the_fast_path_and_keeps_state():
    async def go():
        conn, _ = new_conn()
        sink = Rec()
        fut = conn.request(b"GET / HTTP/1.1\r\n\r\n", b"", sink)
        conn.feed(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", 1)
        for k, piece in enumerate((b"hello", b" ", b"world")):
            conn.feed(b"%x\r\n%b\r\n" % (len(piece), piece), 2 + k)
        conn.feed(b"3\r\nab", 5)        # a partial chunk: general parser, bytes buffered
        conn.feed(b"c\r\n", 6)          # buffered: not the fast path
        conn.feed(b"1\r\n!\r\n", 7)     # fast path again
        conn.feed(b"0\r\n\r\n", 8)      # the last chunk: general parser
        await fut
        return sink, conn

    sink, conn = asyncio.run(go())
    assert sink.body == b"hello worldabc!"
    assert sink.times == [1, 2, 3, 4, 5, 6, 7]
    assert conn.reusable


class _NeverConnects(socket.socket):
    """A socket whose connect stays pending (its send buffer is full, so never writable)."""

    def connect_ex(self, addr):
        return errno.EINPROGRESS


def test_sock_connect_times_out_at_the_deadline():
    a, b = socket.socketpair()
    a.setblocking(False)
    with contextlib.suppress(BlockingIOError):
        while True:
            a.send(b"x" * 65536)
    sock = _NeverConnects(fileno=a.detach())

    async def go():
        loop = asyncio.get_running_loop()
        with pytest.raises(TimeoutError):
            await httpconn.sock_connect(loop, sock, ("127.0.0.1", 9), loop.time() + 0.05)

    try:
        asyncio.run(go())
    finally:
        sock.close()
        b.close()


def test_pool_connect_refused_and_success():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]  # nothing listens here once closed
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)

    async def go():
        with pytest.raises(HTTPError) as ei:
            await httpconn.Pool("127.0.0.1", closed_port).acquire()
        assert ei.value.error_class == "connect_error"
        pool = httpconn.Pool("127.0.0.1", listener.getsockname()[1], clock=ArrivalClock("user"))
        conn = await pool.acquire()
        assert pool.opened == 1 and not conn.closed
        conn.close()

    try:
        asyncio.run(go())
    finally:
        listener.close()


class _ConnectsAtOnce(socket.socket):
    """A connect that reports EINPROGRESS, then EISCONN when asked again (loopback's usual)."""

    def connect_ex(self, addr):
        self.calls = getattr(self, "calls", 0) + 1
        return errno.EINPROGRESS if self.calls == 1 else errno.EISCONN


def test_sock_connect_does_not_wait_for_a_handshake_that_already_completed():
    sock = _ConnectsAtOnce()

    class NoWaitLoop:
        def create_future(self):
            raise AssertionError("should not wait for writability")

    coro = httpconn.sock_connect(NoWaitLoop(), sock, ("127.0.0.1", 9), 0.0)
    try:
        with pytest.raises(StopIteration):  # finished without suspending
            coro.send(None)
        assert sock.calls == 2
    finally:
        coro.close()
        sock.close()


# -- response framing edge cases --------------------------------------------------------------

def _exchange(*reads, eof=False):
    """Feed ``reads`` to a fresh connection; (outcome, sink, conn)."""
    async def go():
        conn, _ = new_conn()
        sink = Rec()
        fut = conn.request(b"GET / HTTP/1.1\r\n\r\n", b"", sink)
        for k, r in enumerate(reads):
            conn.feed(r, k)
        if eof and not fut.done():
            conn._lost(None)
        if not fut.done():
            return "pending", sink, conn
        exc = fut.exception()
        return (exc.error_class if exc else "done"), sink, conn

    return asyncio.run(go())


def test_interim_100_continue_is_skipped_for_the_real_response():
    out, sink, conn = _exchange(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n"
                                b"Content-Length: 2\r\n\r\nok")
    assert out == "done" and sink.status == 200 and sink.body == b"ok" and conn.reusable


def test_204_and_content_length_0_have_no_body():
    for head in (b"HTTP/1.1 204 No Content\r\n\r\n", b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"):
        out, sink, conn = _exchange(head)
        assert out == "done" and sink.body == b"" and conn.reusable


def test_http_1_0_closes_unless_keep_alive_and_bare_lf_heads_parse():
    out, sink, conn = _exchange(b"HTTP/1.0 200 OK\nContent-Length: 1\n\nx")
    assert out == "done" and sink.body == b"x" and not conn.reusable
    out, _, conn = _exchange(b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n")
    assert out == "done" and conn.reusable


def test_body_until_close_and_missing_final_crlf_still_complete():
    out, sink, _ = _exchange(b"HTTP/1.1 200 OK\r\n\r\nabc", b"def", eof=True)
    assert out == "done" and sink.body == b"abcdef"
    out, sink, _ = _exchange(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n",
                             eof=True)
    assert out == "done" and sink.body == b"abc"


def test_trailers_are_consumed_and_bytes_after_a_response_stop_reuse():
    out, sink, conn = _exchange(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                                b"1\r\na\r\n0\r\nX-Trailer: 1\r\n", b"\r\n")
    assert out == "done" and sink.body == b"a" and conn.reusable
    out, _, conn = _exchange(b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\naEXTRA")
    assert out == "done" and not conn.reusable and conn.closed


def test_unsolicited_bytes_on_an_idle_connection_close_it():
    async def go():
        conn, _ = new_conn()
        conn.feed(b"HTTP/1.1 408 Request Timeout\r\n\r\n", 1)
        return conn

    conn = asyncio.run(go())
    assert conn.closed and not conn.reusable


def test_an_exception_in_a_sink_fails_the_request_instead_of_escaping():
    class Broken(Rec):
        def on_body(self, data, t):
            raise KeyError("boom")

    async def go():
        conn, _ = new_conn()
        fut = conn.request(b"GET / HTTP/1.1\r\n\r\n", b"", Broken())
        conn.feed(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", 1)  # must not raise
        with pytest.raises(HTTPError) as ei:
            await fut
        return ei.value, conn

    err, conn = asyncio.run(go())
    assert err.error_class == "client.internal_error" and "KeyError" in str(err)
    assert conn.closed


@pytest.mark.parametrize(("name", "value", "ok"), [
    ("Authorization", "Bearer sk-1", True), ("Authorization", "Bearer a\r\nX: 1", False),
    ("Bad Name", "x", False), ("X-Key", "caf\u00e9", True), ("X-Key", "\u4e2d", False),
])
def test_check_header(name, value, ok):
    assert (httpconn.check_header(name, value) is None) == ok


def test_build_head_brackets_ipv6_and_keeps_gets_bodiless():
    head = httpconn.build_head("GET", "::1", 8000, "/health", 0)
    assert b"Host: [::1]:8000\r\n" in head and b"Content-Length" not in head
    post = httpconn.build_head("POST", "h", 1, "/v1/completions", 5, {"Authorization": "Bearer k"})
    assert b"Content-Length: 5\r\n" in post and post.endswith(b"Authorization: Bearer k\r\n\r\n")
