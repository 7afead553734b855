import asyncio

import pytest

from infersweep.bench.httpconn import ClientConnection, HTTPError, Sink


class FakeTransport:
    def __init__(self):
        self.written = b""
        self.closed = False

    def write(self, data):
        self.written += data

    def close(self):
        self.closed = True

    def abort(self):
        self.closed = True

    def get_extra_info(self, name):
        return None


class Rec(Sink):
    def __init__(self):
        self.status = None
        self.body = b""

    def on_headers(self, status, headers, t):
        self.status = status

    def on_body(self, data, t):
        self.body += data


RESP = (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"5\r\nhello\r\n1;ext=1\r\n \r\nb\r\nworld, ok!!\r\n0\r\n\r\n")


def run_splits(splits):
    async def go():
        conn = ClientConnection()
        conn.connection_made(FakeTransport())
        sink = Rec()
        fut = conn.request(b"POST / HTTP/1.1\r\n\r\n", b"", sink)
        pos = 0
        for s in splits:
            conn.data_received(RESP[pos:s])
            pos = s
        conn.data_received(RESP[pos:])
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
        conn = ClientConnection()
        t = FakeTransport()
        conn.connection_made(t)
        sink = Rec()
        fut = conn.request(b"GET / HTTP/1.1\r\n\r\n", b"", sink)
        conn.data_received(b"HTTP/1.1 404 Not Found\r\nContent-Length: 3\r\nConnection: close\r\n\r\nab")
        conn.data_received(b"c")
        await fut
        return sink, conn, t

    sink, conn, t = asyncio.run(go())
    assert sink.status == 404 and sink.body == b"abc"
    assert t.closed and not conn.reusable


def test_disconnect_mid_body_raises_classified_error():
    async def go():
        conn = ClientConnection()
        conn.connection_made(FakeTransport())
        fut = conn.request(b"GET / HTTP/1.1\r\n\r\n", b"", Rec())
        conn.data_received(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel")
        conn.connection_lost(None)
        with pytest.raises(HTTPError) as ei:
            await fut
        return ei.value

    assert asyncio.run(go()).error_class == "disconnect"


def test_garbage_status_line_is_malformed():
    async def go():
        conn = ClientConnection()
        conn.connection_made(FakeTransport())
        fut = conn.request(b"GET / HTTP/1.1\r\n\r\n", b"", Rec())
        conn.data_received(b"SSH-2.0-OpenSSH\r\n\r\n")
        with pytest.raises(HTTPError) as ei:
            await fut
        return ei.value

    assert asyncio.run(go()).error_class == "malformed_http"
