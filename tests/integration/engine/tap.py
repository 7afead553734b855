"""A TCP tap between the client and the engine: forwards bytes both ways unchanged and keeps
what the client sent, so a test can read the request bodies that went over the wire."""

from __future__ import annotations

import contextlib
import json
import socket
import threading


class Tap:
    def __init__(self, upstream_port: int, host: str = "127.0.0.1"):
        self.upstream = (host, upstream_port)
        self.sent: list[bytes] = []  # per client connection, everything it sent
        self._lock = threading.Lock()
        self._listener = socket.create_server((host, 0))
        self.port = self._listener.getsockname()[1]
        self.url = f"http://{host}:{self.port}"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return  # closed
            server = socket.create_connection(self.upstream)
            with self._lock:
                index = len(self.sent)
                self.sent.append(b"")
            threading.Thread(target=self._pump, args=(client, server, index), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client, None), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket, index: int | None) -> None:
        with contextlib.suppress(OSError):
            while data := src.recv(65536):
                if index is not None:
                    with self._lock:
                        self.sent[index] += data
                dst.sendall(data)
        for s in (src, dst):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)

    def bodies(self) -> list[dict]:
        """The JSON bodies of the POST requests sent so far (Content-Length framed)."""
        out = []
        with self._lock:
            streams = list(self.sent)
        for raw in streams:
            while (end := raw.find(b"\r\n\r\n")) >= 0:
                head, raw = raw[:end].decode("latin-1"), raw[end + 4:]
                length = next((int(line.split(":", 1)[1]) for line in head.split("\r\n")
                               if line.lower().startswith("content-length:")), 0)
                body, raw = raw[:length], raw[length:]
                if head.startswith("POST "):
                    out.append(json.loads(body))
        return out

    def close(self) -> None:
        self._listener.close()
