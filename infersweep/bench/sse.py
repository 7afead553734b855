"""Incremental Server-Sent Events parser (WHATWG event-stream framing).

Handles ``\\n``, ``\\r\\n`` and ``\\r`` line ends (also split across reads), comment lines,
``event:`` fields, multi-line ``data:`` and fields without the optional space. There is no
line-length limit. Only the framing is parsed here; JSON decoding is the caller's job.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True)
class Event:
    data: bytes
    event: str = "message"


class SSEParser:
    __slots__ = ("_buf", "_cr")

    def __init__(self) -> None:
        self._buf = b""
        self._cr = False  # the previous read ended in '\r' (maybe half of '\r\n')

    def feed(self, data: bytes) -> list[Event]:
        """Return every event completed by ``data``, in order."""
        if self._cr:
            self._cr = False
            if data.startswith(b"\n"):
                data = data[1:]
        if b"\r" in data:
            if data.endswith(b"\r"):
                self._cr = True
            data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        buf = self._buf + data if self._buf else data
        if b"\n\n" not in buf:
            self._buf = buf
            return []
        blocks = buf.split(b"\n\n")
        self._buf = blocks.pop()
        out = []
        for block in blocks:
            # fast path: one 'data: ...' line
            if block.startswith(b"data: ") and b"\n" not in block:
                out.append(Event(block[6:]))
                continue
            ev = _parse_block(block)
            if ev is not None:
                out.append(ev)
        return out

    def single_data(self, data: bytes) -> bytes | None:
        """The data of ``data`` if it is exactly one ``data: ...`` event, else None.

        The streaming fast path: with nothing buffered, a read that is one whole
        ``data: X\n\n`` event (no other line, no CR) dispatches exactly what :meth:`feed`
        would, without splitting or building an :class:`Event`. None means "unsure": the
        caller must then use :meth:`feed`, which also keeps the parser's state right.
        """
        if (self._buf or self._cr or not data.startswith(b"data: ")
                or data.find(b"\n") != len(data) - 2 or not data.endswith(b"\n\n")
                or b"\r" in data):
            return None
        return data[6:-2]

    def pending(self) -> bytes:
        """Bytes of an event not yet terminated by a blank line."""
        return self._buf


def _parse_block(block: bytes) -> Event | None:
    data: list[bytes] = []
    etype = "message"
    for line in block.split(b"\n"):
        if not line or line.startswith(b":"):
            continue  # blank (leading newlines) or comment / keep-alive
        field, sep, value = line.partition(b":")
        if sep and value.startswith(b" "):
            value = value[1:]
        if field == b"data":
            data.append(value)
        elif field == b"event":
            etype = value.decode("utf-8", "replace")
        # 'id' and 'retry' carry nothing a benchmark needs; unknown fields are ignored (spec)
    if not data:
        return None  # an event with no data is not dispatched
    return Event(b"\n".join(data), etype)
