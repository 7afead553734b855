"""Readiness probe: wait for the server, then send one validated streaming request."""

from __future__ import annotations

import time
import urllib.error
import urllib.request

from infersweep.bench.stream import StreamSink
from infersweep.diagnostics import InputError


def _get(url: str, timeout: float) -> int:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            return resp.status
    except urllib.error.HTTPError as exc:
        return exc.code


def wait_ready(base_url: str, timeout: float) -> str:
    """Poll ``/health`` (then ``/v1/models``) until one answers 200; return which did."""
    deadline = time.monotonic() + timeout
    last = ""
    while True:
        for path in ("/health", "/v1/models"):
            try:
                if _get(base_url + path, timeout=5) == 200:
                    return path
                last = f"{path} answered non-200"
            except (urllib.error.URLError, OSError) as exc:
                last = str(getattr(exc, "reason", exc))
                break
        if time.monotonic() >= deadline:
            raise InputError(f"server at {base_url} is not ready after {timeout:g}s ({last}); "
                             "is it running? (--ready-timeout, --base-url)")
        time.sleep(0.5)


def test_request(url: str, body: bytes, chat: bool, headers: dict, timeout: float) -> StreamSink:
    """One small streaming request through the same parser the run uses."""
    req = urllib.request.Request(url, data=body, method="POST",
                                 headers={"Content-Type": "application/json", **headers})
    sink = StreamSink(chat=chat)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            sink.on_headers(resp.status, {}, 0)
            while True:
                data = resp.read1(65536)
                if not data:
                    break
                sink.on_body(data, time.monotonic_ns())
    except urllib.error.HTTPError as exc:
        sink.on_headers(exc.code, {}, 0)
        sink.on_body(exc.read(), 0)
    except (urllib.error.URLError, OSError) as exc:
        raise InputError(f"test request to {url} failed: {getattr(exc, 'reason', exc)}") from exc
    sink.finish()
    if sink.error_class:
        raise InputError(f"test request to {url} failed [{sink.error_class}]: {sink.error}")
    return sink
