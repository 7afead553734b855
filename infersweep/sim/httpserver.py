"""A small HTTP/1.1 server on a raw asyncio protocol (keep-alive, chunked streaming).

The simulator writes thousands of SSE chunks per second from one timer callback; a plain
protocol lets it do that with one ``transport.write`` per chunk and no per-chunk coroutine.
"""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import orjson

REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed",
           411: "Length Required", 413: "Payload Too Large", 429: "Too Many Requests",
           500: "Internal Server Error", 503: "Service Unavailable"}
MAX_BODY = 64 * 1024 * 1024


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    arrival_ns: int
    head: bool = False  # a HEAD request: routed as GET, answered without a body


class Responder:
    """Writes one response on a connection; streaming uses chunked transfer encoding."""

    __slots__ = ("conn", "finished", "head_only", "streaming")

    def __init__(self, conn: ServerConnection, head_only: bool = False):
        self.conn = conn
        self.finished = False
        self.streaming = False
        # An answer to HEAD has the headers GET would get and never a body: a body would be
        # read as the start of the next response on a keep-alive connection.
        self.head_only = head_only

    @property
    def alive(self) -> bool:
        return not self.conn.closed

    def send(self, status: int, body: bytes, ctype: str = "application/json") -> None:
        if self.finished or self.conn.closed:
            return
        head = (f"HTTP/1.1 {status} {REASONS.get(status, 'Status')}\r\n"
                f"Content-Type: {ctype}\r\nContent-Length: {len(body)}\r\n\r\n")
        self.conn.transport.write(head.encode() if self.head_only else head.encode() + body)
        self._done()

    def json(self, status: int, obj) -> None:
        self.send(status, orjson.dumps(obj))

    def start_stream(self) -> None:
        self.streaming = True
        if not self.conn.closed:
            self.conn.transport.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                b"Cache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n\r\n")

    def write(self, data: bytes) -> None:
        """One HTTP chunk (one or more whole SSE events)."""
        if not self.conn.closed and not self.head_only:
            self.conn.transport.write(b"%x\r\n%b\r\n" % (len(data), data))

    def end_stream(self) -> None:
        if not self.finished and not self.conn.closed and not self.head_only:
            self.conn.transport.write(b"0\r\n\r\n")
        self._done()

    def abort(self) -> None:
        """Drop the connection (models a server dying mid-response)."""
        self.finished = True
        if not self.conn.closed:
            self.conn.transport.abort()

    def _done(self) -> None:
        if not self.finished:
            self.finished = True
            self.conn.response_done()


Handler = Callable[[Request, Responder], Awaitable[None] | None]


class ServerConnection(asyncio.Protocol):
    def __init__(self, handler: Handler, on_close: Callable[[ServerConnection], None] | None):
        self.handler = handler
        self.on_close = on_close
        self.transport = None
        self.closed = False
        self._buf = b""
        self._busy = False
        self._head: tuple | None = None
        self._t = 0
        self.responder: Responder | None = None

    def connection_made(self, transport):
        self.transport = transport
        sock = transport.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def connection_lost(self, exc):
        self.closed = True
        if self.on_close:
            self.on_close(self)

    def data_received(self, data):
        self._t = time.monotonic_ns()
        self._buf += data
        if not self._busy:
            self._parse()

    def _parse(self) -> None:
        while not self._busy and not self.closed:
            if self._head is None:
                end = self._buf.find(b"\r\n\r\n")
                if end < 0:
                    if len(self._buf) > 65536:
                        self._error(400, "request head too large")
                    return
                head, self._buf = self._buf[:end].decode("latin-1"), self._buf[end + 4 :]
                lines = head.split("\r\n")
                parts = lines[0].split(" ")
                if len(parts) != 3:
                    self._error(400, "malformed request line")
                    return
                headers = {}
                for line in lines[1:]:
                    k, _, v = line.partition(":")
                    headers[k.strip().lower()] = v.strip()
                if "chunked" in headers.get("transfer-encoding", "").lower():
                    self._error(411, "chunked request bodies are not supported")
                    return
                try:
                    length = int(headers.get("content-length", "0"))
                except ValueError:
                    self._error(400, "bad Content-Length")
                    return
                if length > MAX_BODY:
                    self._error(413, "request body too large")
                    return
                self._head = (parts[0], parts[1], headers, length)
            method, path, headers, length = self._head
            if len(self._buf) < length:
                return
            body, self._buf = self._buf[:length], self._buf[length:]
            self._head = None
            self._busy = True
            head = method == "HEAD"
            req = Request("GET" if head else method, path.split("?", 1)[0], headers, body,
                          self._t, head)
            self.responder = Responder(self, head_only=head)
            res = self.handler(req, self.responder)
            if asyncio.iscoroutine(res):
                asyncio.get_running_loop().create_task(self._guard(res))

    async def _guard(self, coro) -> None:
        try:
            await coro
        except Exception as exc:  # noqa: BLE001 - a handler bug becomes a 500, not a hang
            if self.responder and not self.responder.finished:
                if self.responder.streaming:
                    self.responder.abort()
                else:
                    self.responder.json(500, {"object": "error", "message": str(exc),
                                              "type": "InternalServerError", "code": 500})

    def response_done(self) -> None:
        self._busy = False
        self.responder = None
        if self._buf and not self.closed:
            asyncio.get_running_loop().call_soon(self._parse)

    def _error(self, status: int, msg: str) -> None:
        body = orjson.dumps({"object": "error", "message": msg, "code": status})
        self.transport.write(
            f"HTTP/1.1 {status} {REASONS.get(status, 'Error')}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode() + body)
        self.transport.close()
        self.closed = True


async def serve(handler: Handler, host: str, port: int, on_close=None,
                ssl_context=None) -> asyncio.AbstractServer:
    """Listen on a loopback address; with ``ssl_context``, https (TLS in the event loop)."""
    if host not in ("127.0.0.1", "localhost", "::1"):
        raise ValueError("the simulator binds loopback addresses only")
    loop = asyncio.get_running_loop()
    return await loop.create_server(lambda: ServerConnection(handler, on_close), host, port,
                                    reuse_address=True, backlog=4096, ssl=ssl_context)
