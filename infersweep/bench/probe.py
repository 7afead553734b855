"""Readiness probe: wait for the server, then send one validated streaming request.

Both steps use the run's own connection and parser (http or https, the same failure
classes), each under an overall deadline: a server that answers slowly, or streams keep-alive
comments and never finishes, ends the probe with a message, never a hang or a traceback.
"""

from __future__ import annotations

import asyncio
import time
from urllib.parse import urlsplit

from infersweep.bench.failures import Failure, RequestFailure
from infersweep.bench.httpconn import ArrivalClock, Pool, Sink, build_head
from infersweep.bench.stream import StreamSink
from infersweep.bench.tls import TLSConfig
from infersweep.diagnostics import InputError

ATTEMPT_TIMEOUT = 5.0  # one /health or /v1/models attempt
RETRY_DELAY = 0.5


class _Status(Sink):
    """Keeps the status; the body is dropped."""

    def __init__(self) -> None:
        self.status = 0

    def on_headers(self, status, headers, t):
        self.status = status


def _target(url: str) -> tuple[str, int, str]:
    u = urlsplit(url)
    return u.hostname or "", u.port or (443 if u.scheme == "https" else 80), u.path.rstrip("/")


async def _exchange(pool: Pool, method: str, path: str, body: bytes, headers: dict,
                    sink: Sink, timeout: float) -> None:
    """One request on a fresh connection, bounded by ``timeout`` overall (connect included).

    The pool's own connect deadline comes a little earlier, so that a connect or TLS
    handshake that stalls is reported with its own class."""
    conn = None
    pool.connect_timeout = max(0.01, min(pool.connect_timeout, timeout - 0.05))

    async def go():
        nonlocal conn
        conn = await pool.acquire()
        await conn.request(build_head(method, pool.host, pool.port, path, len(body), headers),
                           body, sink)

    try:
        await asyncio.wait_for(go(), timeout)
    except (TimeoutError, asyncio.TimeoutError):  # noqa: UP041 - distinct on Python 3.10
        if conn is None:
            raise RequestFailure(Failure.CONNECT_TIMEOUT, f"no connection to {pool.host}:"
                                 f"{pool.port} within {timeout:g}s") from None
        raise RequestFailure(Failure.TIMEOUT, f"no complete answer within {timeout:g}s") from None
    finally:
        if conn is not None:
            conn.close()


def wait_ready(base_url: str, timeout: float, tls: TLSConfig | None = None,
               headers: dict | None = None) -> str:
    """Poll ``/health`` (then ``/v1/models``) until one answers 200; return which did."""
    return asyncio.run(_wait_ready(base_url, timeout, tls, headers or {}))


async def _wait_ready(base_url: str, timeout: float, tls: TLSConfig | None, headers: dict) -> str:
    host, port, prefix = _target(base_url)
    pool = Pool(host, port, connect_timeout=ATTEMPT_TIMEOUT, clock=ArrivalClock("user"), tls=tls)
    deadline = time.monotonic() + timeout
    last = ""
    while True:
        for path in ("/health", "/v1/models"):
            left = deadline - time.monotonic()
            sink = _Status()
            try:
                await _exchange(pool, "GET", prefix + path, b"", headers, sink,
                                max(0.05, min(ATTEMPT_TIMEOUT, left)))
            except RequestFailure as exc:
                if exc.error_class == Failure.TLS_VERIFY:  # waiting will not fix it
                    raise InputError(f"server at {base_url}: {exc}") from None
                last = f"{path}: [{exc.error_class}] {exc}"
                if exc.error_class in (Failure.CONNECT_ERROR, Failure.CONNECT_TIMEOUT,
                                       Failure.TLS_ERROR):
                    break  # no connection to ask on: no point asking the next path
                continue
            if sink.status == 200:
                return path
            last = f"{path} answered HTTP {sink.status}"
        if time.monotonic() >= deadline:
            raise InputError(f"server at {base_url} is not ready after {timeout:g}s ({last}); "
                             "is it running? (--ready-timeout, --base-url)")
        await asyncio.sleep(min(RETRY_DELAY, max(0.0, deadline - time.monotonic())))


def test_request(url: str, body: bytes, chat: bool, headers: dict, timeout: float,
                 tls: TLSConfig | None = None) -> StreamSink:
    """One small streaming request through the same parser the run uses, within ``timeout``
    seconds overall."""
    sink = StreamSink(chat=chat)
    host, port, path = _target(url)
    pool = Pool(host, port, connect_timeout=min(timeout, 30.0), clock=ArrivalClock("user"),
                tls=tls)
    try:
        asyncio.run(_exchange(pool, "POST", path, body, headers, sink, timeout))
    except RequestFailure as exc:
        if not sink.error_class:
            sink.error_class, sink.error = exc.error_class, str(exc)
    else:
        sink.finish()
    if sink.error_class:
        raise InputError(f"test request to {url} failed [{sink.error_class}]: {sink.error}")
    return sink
