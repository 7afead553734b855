"""BrokenEngine: a test double of a misbehaving inference engine.

A real loopback HTTP server (threads, plain sockets) that reads each request and answers it
with scripted bytes: whatever a broken engine or proxy might send. A script is a list of
``bytes`` (sent as is), ``float`` (pause, seconds), ``HANG`` (keep the connection open and send
nothing more) or ``CLOSE`` (close it); after the list the connection serves the next request.
``GET /health`` and ``GET /v1/models`` answer 200 unless ``health`` scripts them too.
"""

from __future__ import annotations

import contextlib
import socket
import socketserver
import ssl
import threading
from collections.abc import Callable

HANG = "hang"
CLOSE = "close"
Script = list  # of bytes | float | HANG | CLOSE

OK_HEALTH = [b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"]


def chunked(*parts: bytes) -> bytes:
    """The HTTP chunks of ``parts`` (one chunk each)."""
    return b"".join(b"%x\r\n%b\r\n" % (len(p), p) for p in parts)


SSE_HEAD = (b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n")
END = b"0\r\n\r\n"


def event(data: str | bytes) -> bytes:
    return b"data: " + (data.encode() if isinstance(data, str) else data) + b"\n\n"


def good_stream(chat: bool = False, tokens: int = 2) -> bytes:
    """A valid streamed completion of ``tokens`` single-token chunks, with usage."""
    if chat:
        chunks = [event('{"choices":[{"index":0,"delta":{"content":"w"}}]}')] * tokens
    else:
        chunks = [event('{"choices":[{"index":0,"text":"w"}]}')] * tokens
    chunks.append(event('{"choices":[],"usage":{"prompt_tokens":8,"completion_tokens":'
                        f'{tokens}}}}}'))
    chunks.append(event("[DONE]"))
    return SSE_HEAD + chunked(*chunks) + END


class BrokenEngine:
    def __init__(self, script: Script | Callable[[int], Script],
                 health: Script | None = None, tls: ssl.SSLContext | None = None):
        self.script = script if callable(script) else (lambda _i: script)
        self.health = health or OK_HEALTH
        self.tls = tls
        self.requests: list[tuple[str, str, dict]] = []
        self.stop = threading.Event()
        self._lock = threading.Lock()
        self._posts = 0
        self._conns: set[socket.socket] = set()
        engine = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self):
                engine._serve(self.request)

        class Server(socketserver.ThreadingTCPServer):
            daemon_threads = True
            allow_reuse_address = True

        self.server = Server(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        scheme = "https" if tls else "http"
        self.url = f"{scheme}://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self.server.serve_forever, args=(0.05,),
                                        daemon=True)
        self._thread.start()

    def _serve(self, sock: socket.socket) -> None:
        if self.tls is not None:
            try:
                sock = self.tls.wrap_socket(sock, server_side=True)
            except (ssl.SSLError, OSError):
                return  # the client refused our certificate: that is its business
        with self._lock:
            self._conns.add(sock)
        try:
            buf = b""
            while not self.stop.is_set():
                while b"\r\n\r\n" not in buf:
                    data = sock.recv(65536)
                    if not data:
                        return
                    buf += data
                head, _, buf = buf.partition(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                method, path = lines[0].split(" ")[:2]
                headers = {k.strip().lower(): v.strip()
                           for k, _, v in (x.partition(":") for x in lines[1:])}
                length = int(headers.get("content-length", "0"))
                while len(buf) < length:
                    data = sock.recv(65536)
                    if not data:
                        return
                    buf += data
                buf = buf[length:]
                self.requests.append((method, path, headers))
                if method == "GET" and path.rsplit("/", 1)[-1] in ("health", "models"):
                    script = self.health
                else:
                    with self._lock:
                        i = self._posts
                        self._posts += 1
                    script = self.script(i)
                for item in script:
                    if item == HANG:
                        self.stop.wait()
                        return
                    if item == CLOSE:
                        return
                    if isinstance(item, float):
                        if self.stop.wait(item):
                            return
                        continue
                    sock.sendall(item)
        except OSError:
            return
        finally:
            with self._lock:
                self._conns.discard(sock)
            sock.close()

    def close(self) -> None:
        self.stop.set()
        self.server.shutdown()
        self.server.server_close()
        with self._lock:
            for s in list(self._conns):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)

    def __enter__(self) -> BrokenEngine:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
