"""A minimal HTTP/1.1 client connection on a raw asyncio protocol.

Why not aiohttp here: the benchmark must timestamp bytes when they arrive. With a protocol
the clock is read first thing in ``data_received``, before any parsing or coroutine wake-up,
and a chunk costs no future or task switch. Connections are kept alive and pooled.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time
from collections.abc import Callable

_now = time.monotonic_ns


class HTTPError(Exception):
    """Transport-level failure (connection refused, reset, malformed response)."""

    def __init__(self, error_class: str, message: str):
        super().__init__(message)
        self.error_class = error_class


class Sink:
    """Receives a response. ``on_body`` gets decoded body bytes and the arrival clock (ns)."""

    def on_headers(self, status: int, headers: dict[str, str], t: int) -> None:
        pass

    def on_body(self, data: bytes, t: int) -> None:
        pass


class ClientConnection(asyncio.Protocol):
    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self._sink: Sink | None = None
        self._done: asyncio.Future | None = None
        self._state = 0  # 0 idle, 1 headers, 2 chunk size, 3 chunk data, 4 sized body, 5 to close
        self._buf = b""
        self._remaining = 0
        self._keepalive = True
        self.last_activity = 0

    # -- protocol callbacks ---------------------------------------------------------------
    def connection_made(self, transport):
        self.transport = transport
        sock = transport.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def connection_lost(self, exc):
        self.closed = True
        if self._done is not None and not self._done.done():
            if self._state == 5:
                self._finish()
            else:
                msg = f"connection closed by server mid-response ({exc})" if exc else (
                    "connection closed by server mid-response")
                self._done.set_exception(HTTPError("disconnect", msg))

    def data_received(self, data: bytes):
        t = _now()
        self.last_activity = t
        sink = self._sink
        if sink is None:
            return  # unsolicited bytes on an idle connection: ignore
        state = self._state
        buf = self._buf + data if self._buf else data
        self._buf = b""
        if state == 1:
            end = buf.find(b"\r\n\r\n")
            if end < 0:
                self._buf = buf
                return
            head, buf = buf[:end], buf[end + 4 :]
            try:
                status, headers = _parse_head(head)
            except ValueError as exc:
                self._fail("malformed_http", str(exc))
                return
            self._keepalive = headers.get("connection", "").lower() != "close"
            sink.on_headers(status, headers, t)
            if headers.get("transfer-encoding", "").lower() == "chunked":
                state = 2
            elif "content-length" in headers:
                self._remaining = int(headers["content-length"])
                state = 4
            else:
                state = 5
                self._keepalive = False
        if state == 2 or state == 3:
            # chunked: self._remaining counts the chunk's data plus its trailing CRLF
            pieces = []
            pos = 0
            n = len(buf)
            while True:
                if state == 3:
                    avail = n - pos
                    data_left = self._remaining - 2
                    if data_left > 0 and avail:
                        d = data_left if data_left < avail else avail
                        pieces.append(buf[pos : pos + d])
                    take = self._remaining if self._remaining < avail else avail
                    pos += take
                    self._remaining -= take
                    if self._remaining:
                        break
                    state = 2
                eol = buf.find(b"\r\n", pos)
                if eol < 0:
                    self._buf = buf[pos:]
                    break
                try:
                    size = int(buf[pos:eol].split(b";", 1)[0], 16)
                except ValueError:
                    self._fail("malformed_http", "bad chunk size in chunked response")
                    return
                pos = eol + 2
                if size == 0:  # last chunk; SSE servers send no trailers
                    if pieces:
                        sink.on_body(b"".join(pieces), t)
                    self._finish()
                    return
                self._remaining = size + 2
                state = 3
            self._state = state
            if pieces:
                sink.on_body(b"".join(pieces), t)
            return
        if state == 4:
            take = buf[: self._remaining]
            self._remaining -= len(take)
            self._state = 4
            if take:
                sink.on_body(take, t)
            if self._remaining <= 0:
                self._finish()
            return
        if state == 5:
            self._state = 5
            if buf:
                sink.on_body(buf, t)

    # -- request API ----------------------------------------------------------------------
    def request(self, head: bytes, body: bytes, sink: Sink) -> asyncio.Future:
        loop = asyncio.get_running_loop()
        self._sink = sink
        self._done = loop.create_future()
        self._state = 1
        self._buf = b""
        self.transport.write(head + body if len(body) < 65536 else head)
        if len(body) >= 65536:
            self.transport.write(body)
        return self._done

    def abort(self, error_class: str, message: str) -> None:
        self._fail(error_class, message)

    def _fail(self, error_class: str, message: str) -> None:
        self._keepalive = False
        if self._done is not None and not self._done.done():
            self._done.set_exception(HTTPError(error_class, message))
        self._sink = None
        if self.transport is not None:
            self.transport.abort()
        self.closed = True

    def _finish(self) -> None:
        self._state = 0
        self._sink = None
        done, self._done = self._done, None
        if not self._keepalive and self.transport is not None:
            self.transport.close()
            self.closed = True
        if done is not None and not done.done():
            done.set_result(None)

    @property
    def reusable(self) -> bool:
        return not self.closed and self._keepalive and self._state == 0


def _parse_head(head: bytes) -> tuple[int, dict[str, str]]:
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/"):
        raise ValueError(f"not an HTTP response: {lines[0][:80]!r}")
    status = int(parts[1])
    headers = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    return status, headers


class Pool:
    """Keep-alive connections to one host:port, opened on demand, reused when idle."""

    def __init__(self, host: str, port: int, connect_timeout: float = 30.0):
        self.host = host
        self.port = port
        self.connect_timeout = connect_timeout
        self._idle: list[ClientConnection] = []
        self.opened = 0

    async def acquire(self) -> ClientConnection:
        while self._idle:
            conn = self._idle.pop()
            if conn.reusable:
                return conn
        loop = asyncio.get_running_loop()
        try:
            _, conn = await asyncio.wait_for(
                loop.create_connection(ClientConnection, self.host, self.port),
                self.connect_timeout,
            )
        except TimeoutError as exc:
            raise HTTPError("connect_timeout", f"connect to {self.host}:{self.port} timed out") from exc
        except OSError as exc:
            raise HTTPError("connect_error", f"cannot connect to {self.host}:{self.port}: {exc.strerror or exc}") from exc
        self.opened += 1
        return conn

    def release(self, conn: ClientConnection) -> None:
        if conn.reusable:
            self._idle.append(conn)
        elif conn.transport is not None and not conn.closed:
            conn.transport.close()

    def close(self) -> None:
        for conn in self._idle:
            if conn.transport is not None:
                conn.transport.close()
        self._idle.clear()


def build_head(method: str, host: str, port: int, path: str, body_len: int,
               extra: dict[str, str] | None = None) -> bytes:
    lines = [f"{method} {path} HTTP/1.1", f"Host: {host}:{port}",
             "Content-Type: application/json", "Accept: text/event-stream, application/json",
             f"Content-Length: {body_len}"]
    for k, v in (extra or {}).items():
        lines.append(f"{k}: {v}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


Callback = Callable[[bytes, int], None]
