"""A minimal HTTP/1.1 client connection on a non-blocking socket, with arrival timestamps.

Why not aiohttp (or an asyncio transport) here: the benchmark must timestamp bytes when they
*arrive*, not when the client gets round to them. Each connection owns its socket: the event
loop only tells it the socket is readable (``loop.add_reader``), and it reads with
``recvmsg`` itself, so a chunk costs no future, task switch or transport buffer.

Arrival time. On Linux each socket asks the kernel for receive timestamps (``SO_TIMESTAMPNS``,
or ``SO_TIMESTAMP`` if that is refused): every read then carries, as ancillary data, the time
the data reached the host's network stack (``CLOCK_REALTIME``). That time does not depend on
how many other sockets the loop serves before this one, nor on how late the process wakes up,
which a clock read in user space does. See :class:`ArrivalClock` for how it is put on the
client's monotonic timeline. Where the kernel gives no stamp (another OS, an older kernel,
``--timestamp-source user``), the monotonic clock is read right after the read returns.

When several chunks are already queued in a socket, one read returns them together and the
kernel stamp is that of the newest segment read (Linux reports the last segment's time), so
all the events in that read share the newest arrival time. The user-space clock does the
same, only later.

TLS (https) runs over the same socket: the connection feeds the bytes of each ``recvmsg`` into
an ``ssl.SSLObject`` through a memory BIO and hands on whatever plaintext they complete, with
that read's stamp. A TLS record split over two reads is decrypted, and so arrives, with the
second: the time its last byte reached the host.

Every response that breaks HTTP/1.1 (status line, headers, chunked framing) fails its request
at once with a :class:`~infersweep.bench.failures.Failure` class and closes the connection;
nothing raised while parsing or in a sink escapes the socket callback.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import platform
import re
import socket
import ssl
import struct
import sys
import time
from array import array
from collections.abc import Callable

from infersweep.bench.failures import Failure, ProtocolError, RequestFailure
from infersweep.bench.tls import TLSConfig, TLSSession, handshake

_now = time.monotonic_ns

# Bytes per read. Larger is not cheaper: CPython allocates the whole size for every read and
# shrinks it after, and at 256 KiB glibc serves that from mmap/brk at ~10 µs a read on Linux.
RECV_SIZE = 65536
# Plaintext per SSLObject.read: one TLS record holds at most 16 KiB.
TLS_READ_SIZE = 16384

# Linux's SO_TIMESTAMPNS / SO_TIMESTAMP (the "old" ABI: struct timespec / timeval of native
# longs; the control message type equals the option). Python only names them from 3.12's
# headers on, so fall back to the generic Linux values; parisc and sparc number them
# differently and use the user-space clock unless Python names them.
_GENERIC_LINUX = sys.platform.startswith("linux") and not platform.machine().lower().startswith(
    ("parisc", "sparc"))
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35 if _GENERIC_LINUX else None)
SO_TIMESTAMP = getattr(socket, "SO_TIMESTAMP", 29 if _GENERIC_LINUX else None)
# (option = control message type, multiplier of the second field to ns), best first
_KERNEL_OPTIONS = [(opt, scale) for opt, scale in ((SO_TIMESTAMPNS, 1), (SO_TIMESTAMP, 1000))
                   if opt is not None]
ANC_SIZE = socket.CMSG_SPACE(16) if hasattr(socket, "CMSG_SPACE") else 0
_PAIR64 = struct.Struct("@qq")
_PAIR32 = struct.Struct("@ii")
_unpack64 = _PAIR64.unpack
TIMESTAMP_MODES = ("auto", "kernel", "user")
_SOL_SOCKET = socket.SOL_SOCKET


def parse_timestamp(ancdata, cmsg_type: int, scale: int) -> int | None:
    """The kernel receive time (CLOCK_REALTIME, ns) in ``recvmsg`` ancillary data, or None.

    ``scale`` turns the second field into ns: 1 for a timespec, 1000 for a timeval. 16-byte
    payloads are two 64-bit fields (64-bit platforms, or the y2038-safe layout), 8-byte ones
    two 32-bit fields (32-bit platforms, old layout).
    """
    for level, typ, data in ancdata:
        if level != socket.SOL_SOCKET or typ != cmsg_type:
            continue
        if len(data) >= 16:
            sec, frac = _PAIR64.unpack_from(data)
        elif len(data) >= 8:
            sec, frac = _PAIR32.unpack_from(data)
        else:
            return None
        if sec == 0 and frac == 0:
            return None
        return sec * 1_000_000_000 + frac * scale
    return None


def realtime_offset(samples: int = 5, realtime=time.time_ns, monotonic=_now) -> int:
    """``CLOCK_REALTIME - CLOCK_MONOTONIC`` in ns, from the tightest of a few bracketed reads.

    Both clocks run at the same (NTP-disciplined) rate on Linux; the offset changes only when
    the wall clock is stepped.
    """
    best = None
    for _ in range(max(1, samples)):
        a = monotonic()
        r = realtime()
        b = monotonic()
        if best is None or b - a < best[0]:
            best = (b - a, r - (a + b) // 2)
    return best[1]


class ArrivalClock:
    """Puts kernel receive stamps on the client's monotonic timeline, and counts the reads.

    Send and dispatch times are ``time.monotonic_ns()``; kernel stamps are ``CLOCK_REALTIME``.
    ``offset_ns = realtime - monotonic`` is measured when the worker starts and refreshed every
    watchdog tick (0.25 s), so a step of the wall clock (NTP, an administrator) shifts
    arrival times for at most one tick. A converted stamp is never later than the user-space
    clock read that follows the read, nor earlier than the previous arrival on the same
    connection (guards against offset rounding, not corrections of real data).

    For every kernel-stamped read it also keeps ``read delay`` = user-space clock after the
    read minus kernel arrival: how late a user-space clock read would have been.
    """

    def __init__(self, mode: str = "auto"):
        if mode not in TIMESTAMP_MODES:
            raise ValueError(f"timestamp mode must be one of {TIMESTAMP_MODES}, not {mode!r}")
        self.mode = mode
        self._primer: socket.socket | None = None
        self.offset_ns = realtime_offset()
        self.kernel_reads = 0
        self.user_reads = 0
        self.delays = array("q")

    def prime(self) -> None:
        """Switch the kernel's receive stamping on now, by holding one stamped socket open.

        Linux turns stamping on for the whole stack lazily (deferred work) when the first
        socket asks for it, and off again when the last one closes; data that arrives in
        between carries no stamp. Priming before the run keeps every measured read stamped.
        """
        if self._primer is None and self.mode != "user":
            with contextlib.suppress(OSError):
                s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                if self.enable(s) is None:
                    s.close()
                else:
                    self._primer = s

    def close(self) -> None:
        if self._primer is not None:
            self._primer.close()
            self._primer = None

    def refresh(self) -> None:
        self.offset_ns = realtime_offset()

    def reset_stats(self) -> None:
        self.kernel_reads = 0
        self.user_reads = 0
        self.delays = array("q")

    def to_monotonic(self, realtime_ns: int) -> int:
        return realtime_ns - self.offset_ns

    def enable(self, sock: socket.socket) -> tuple[int, int] | None:
        """Ask the kernel to stamp this socket's reads; (cmsg type, scale) or None."""
        if self.mode == "user" or not ANC_SIZE or not hasattr(sock, "recvmsg"):
            return None
        for opt, scale in _KERNEL_OPTIONS:
            try:
                sock.setsockopt(socket.SOL_SOCKET, opt, 1)
            except OSError:
                continue
            return opt, scale
        return None

    def source(self) -> str:
        """"kernel" if every read had a kernel stamp, "user" if none did, else "mixed"."""
        if self.kernel_reads and not self.user_reads:
            return "kernel"
        if self.user_reads and not self.kernel_reads:
            return "user"
        return "mixed" if self.kernel_reads else ("user" if self.mode == "user" else "none")

    def summary(self) -> dict:
        out = {"source": self.source(), "kernel_reads": self.kernel_reads,
               "user_reads": self.user_reads, "offset_ns": self.offset_ns}
        if self.delays:
            d = sorted(self.delays)
            n = len(d)
            out["read_delay_us"] = {"p50": d[n // 2] / 1e3, "p99": d[min(n - 1, (99 * n) // 100)] / 1e3,
                                    "max": d[-1] / 1e3}
        return out


def kernel_timestamps_available() -> bool:
    """Whether this platform gives TCP receive timestamps (tried on an unconnected socket)."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            return ArrivalClock("kernel").enable(s) is not None
    except OSError:
        return False


# The exception a request's future fails with; the name callers have always imported.
HTTPError = RequestFailure


class Sink:
    """Receives a response. ``on_body`` gets decoded body bytes and the arrival clock (ns)."""

    def on_headers(self, status: int, headers: dict[str, str], t: int) -> None:
        pass

    def on_body(self, data: bytes, t: int) -> None:
        pass


class ClientConnection:
    """One keep-alive HTTP/1.1 connection on a connected non-blocking socket.

    The socket is registered with the loop for reading for the connection's whole life (so an
    idle pooled connection notices the server closing it) and for writing only while a request
    is partly sent. It is unregistered before the socket is closed. ``tls`` is an established
    :class:`TLSSession` on this socket (https), or None.
    """

    def __init__(self, sock: socket.socket, loop: asyncio.AbstractEventLoop,
                 clock: ArrivalClock | None = None, tls: TLSSession | None = None):
        self.sock = sock
        self.loop = loop
        self.clock = clock if clock is not None else ArrivalClock("user")
        self.closed = False
        self._fd = sock.fileno()
        self._registered = False
        self._wbuf = b""
        self._sink: Sink | None = None
        self._done: asyncio.Future | None = None
        # 0 idle, 1 head, 2 chunk-size line, 3 chunk data, 4 sized body, 5 body to close,
        # 6 CRLF after chunk data, 7 trailer section
        self._state = 0
        self._buf = b""
        self._remaining = 0
        self._keepalive = True
        self._last_t = 0
        self.last_activity = 0
        self._tls = tls
        self._deliver = self.feed if tls is None else self._feed_tls
        sock.setblocking(False)
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._ts = self.clock.enable(sock)
        self._ts_type, self._ts_scale = self._ts or (0, 0)
        loop.add_reader(self._fd, self._on_kernel_readable if self._ts else self._on_readable)
        self._registered = True
        if tls is not None and tls.incoming.pending:
            # bytes that came with the end of the handshake (TLS 1.3 session tickets)
            loop.call_soon(self._feed_tls, b"", _now())

    # -- reading ---------------------------------------------------------------------------
    def _on_readable(self) -> None:
        try:
            data = self.sock.recv(RECV_SIZE)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            self._lost(exc)
            return
        t = _now()
        if not data:
            self._lost(None)
            return
        self.clock.user_reads += 1
        self._deliver(data, t)

    def _on_kernel_readable(self) -> None:
        try:
            data, anc, _flags, _ = self.sock.recvmsg(RECV_SIZE, ANC_SIZE)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            self._lost(exc)
            return
        t_user = _now()
        if not data:
            self._lost(None)
            return
        clock = self.clock
        rt = None
        if anc:
            level, typ, raw = anc[0]
            if typ == self._ts_type and level == _SOL_SOCKET and len(raw) == 16 and len(anc) == 1:
                sec, frac = _unpack64(raw)  # the usual case, inline; same as parse_timestamp
                if sec:
                    rt = sec * 1_000_000_000 + frac * self._ts_scale
            else:
                rt = parse_timestamp(anc, self._ts_type, self._ts_scale)
        if rt is None:  # no stamp on this read (e.g. queued before stamping was switched on)
            clock.user_reads += 1
            t = t_user
        else:
            clock.kernel_reads += 1
            t = rt - clock.offset_ns
            if t > t_user:
                t = t_user
            clock.delays.append(t_user - t)
        if t < self._last_t:
            t = self._last_t
        self._deliver(data, t)

    def _feed_tls(self, data: bytes, t: int) -> None:
        """Decrypt the TLS records ``data`` completes; their plaintext arrived at ``t``."""
        tls = self._tls
        if data:
            tls.incoming.write(data)
        plain = []
        eof = False
        obj, incoming = tls.obj, tls.incoming
        while True:
            try:
                piece = obj.read(TLS_READ_SIZE)
            except ssl.SSLWantReadError:
                break
            except ssl.SSLZeroReturnError:  # the server's close_notify
                eof = True
                break
            except ssl.SSLError as exc:
                self._fail(Failure.TLS_ERROR, f"TLS error while reading: {exc.reason or exc}")
                return
            if not piece:
                eof = True
                break
            plain.append(piece)
            if not incoming.pending and not obj.pending():
                break  # all read: asking again would only build an SSLWantReadError (~1.5 µs)
        if tls.outgoing.pending:  # e.g. a key update answered by the TLS layer
            self._send_raw(tls.outgoing.read())
        if plain:
            self.feed(plain[0] if len(plain) == 1 else b"".join(plain), t)
        if eof and not self.closed:
            self._lost(None)

    def feed(self, data: bytes, t: int) -> None:
        """Parse received bytes that arrived at monotonic time ``t`` (ns).

        A protocol problem, in the HTTP framing here or in the sink's parsing of the body,
        fails the request at once; so does any other exception (as a client defect), which
        would otherwise escape the loop's callback and leave the request waiting for a
        timeout.
        """
        self._last_t = t
        self.last_activity = t
        sink = self._sink
        if sink is None:
            if data and not self.closed:
                # bytes nobody asked for: the connection's framing can no longer be trusted
                self.close()
            return
        try:
            if self._state == 2 and not self._buf:  # the usual streaming read: one whole chunk
                body = _single_chunk(data)
                if body is not None:
                    sink.on_body(body, t)
                    return
            self._parse(data, t, sink)
        except ProtocolError as exc:
            self._fail(exc.error_class, str(exc))
        except Exception as exc:  # noqa: BLE001 - a defect must fail one request, not hang it
            self._fail(Failure.CLIENT_ERROR, f"{type(exc).__name__} while parsing the "
                       f"response: {exc}"[:300])

    def _parse(self, data: bytes, t: int, sink: Sink) -> None:
        """The general response parser: any split of head, chunks and body across reads."""
        state = self._state
        buf = self._buf + data if self._buf else data
        self._buf = b""
        while state == 1:
            m = _HEAD_END.search(buf)
            if m is None:
                _check_partial_head(buf)
                self._buf = buf
                return
            status, headers, version = _parse_head(buf[: m.start()])
            buf = buf[m.end() :]
            if 100 <= status < 200 and status != 101:
                continue  # an interim response (100 Continue, 103 Early Hints): the real one follows
            state, self._remaining, self._keepalive = _framing(status, headers, version)
            sink.on_headers(status, headers, t)
            if state == 0:  # no body (204, 304, Content-Length: 0)
                self._finish(bool(buf))
                return
        if state >= 6 or state == 2 or state == 3:
            self._parse_chunked(buf, t, sink, state)
            return
        if state == 4:
            take = buf[: self._remaining] if len(buf) > self._remaining else buf
            self._remaining -= len(take)
            self._state = 4
            if take:
                sink.on_body(take, t)
            if self._remaining <= 0:
                self._finish(len(buf) > len(take))
            return
        if state == 5:
            self._state = 5
            if buf:
                sink.on_body(buf, t)

    def _parse_chunked(self, buf: bytes, t: int, sink: Sink, state: int) -> None:
        """Chunked transfer coding (RFC 9112 section 7.1), strictly: a size line of hex
        digits (extensions ignored), the data, CRLF; after the last chunk, trailers (ignored)
        and an empty line."""
        pieces: list[bytes] = []
        try:
            self._chunks(buf, t, sink, state, pieces)
        except ProtocolError:
            # the data before a framing error is delivered first, so that the problem earliest
            # in the stream is the one reported, however the reads were split
            if pieces:
                sink.on_body(b"".join(pieces), t)
            raise

    def _chunks(self, buf: bytes, t: int, sink: Sink, state: int, pieces: list[bytes]) -> None:
        pos = 0
        n = len(buf)
        while True:
            if state == 3:
                avail = n - pos
                if not avail:
                    break
                d = self._remaining if self._remaining < avail else avail
                pieces.append(buf[pos : pos + d])
                pos += d
                self._remaining -= d
                if self._remaining:
                    break
                state = 6
            if state == 6:
                if n - pos < 2:
                    if n - pos == 1 and buf[pos] != 13:
                        raise ProtocolError(Failure.BAD_CHUNK, "chunk data not followed by CRLF")
                    self._buf = buf[pos:]
                    break
                if buf[pos : pos + 2] != b"\r\n":
                    raise ProtocolError(Failure.BAD_CHUNK, "chunk data longer than its size "
                                        f"line says (next bytes {buf[pos : pos + 12]!r})")
                pos += 2
                state = 2
            if state == 2:
                m = _CHUNK_LINE.match(buf, pos)
                if m is None:
                    rest = buf[pos:]
                    if rest and not _CHUNK_LINE_PREFIX.fullmatch(rest):
                        raise ProtocolError(Failure.BAD_CHUNK,
                                            f"invalid chunk-size line {rest[:40]!r}")
                    self._buf = rest
                    break
                pos = m.end()
                size = int(m.group(1), 16)
                if size:
                    self._remaining = size
                    state = 3
                    continue
                state = 7
            # state 7: trailer fields, ended by an empty line
            eol = buf.find(b"\n", pos)
            if eol < 0:
                if n - pos > MAX_HEAD:
                    raise ProtocolError(Failure.BAD_CHUNK, "trailer section larger than 64 KiB")
                self._buf = buf[pos:]
                break
            line = buf[pos:eol]
            pos = eol + 1
            if line in (b"", b"\r"):
                if pieces:
                    body = b"".join(pieces)
                    pieces.clear()
                    sink.on_body(body, t)
                self._finish(pos < n)
                return
        self._state = state
        if pieces:
            body = b"".join(pieces)
            pieces.clear()
            sink.on_body(body, t)

    # -- writing ---------------------------------------------------------------------------
    def _write(self, data: bytes) -> None:
        if self.closed:
            return
        if self._tls is not None:
            try:
                self._tls.obj.write(data)
            except ssl.SSLError as exc:
                self._fail(Failure.TLS_ERROR, f"TLS error while writing: {exc.reason or exc}")
                return
            data = self._tls.outgoing.read()
        self._send_raw(data)

    def _send_raw(self, data: bytes) -> None:
        if self.closed:
            return
        if self._wbuf:
            self._wbuf += data
            return
        try:
            n = self.sock.send(data)
        except (BlockingIOError, InterruptedError):
            n = 0
        except OSError as exc:
            self._lost(exc)
            return
        if n < len(data):
            self._wbuf = data[n:]
            self.loop.add_writer(self._fd, self._on_writable)

    def _on_writable(self) -> None:
        try:
            n = self.sock.send(self._wbuf)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            self._lost(exc)
            return
        self._wbuf = self._wbuf[n:]
        if not self._wbuf:
            self.loop.remove_writer(self._fd)

    # -- life cycle ------------------------------------------------------------------------
    def _lost(self, exc: BaseException | None) -> None:
        """The peer closed (``exc`` None) or the socket failed."""
        state = self._state
        self._teardown()
        if self._done is not None and not self._done.done():
            if state == 5 or state == 7:  # body ends at close / only the final CRLF missing
                self._finish(False)
            else:
                where = "before the response" if state == 1 and not self._buf else "mid-response"
                msg = f"connection closed by the server {where}" + (f" ({exc})" if exc else "")
                self._done.set_exception(HTTPError(Failure.CONNECTION_CLOSED, msg))

    def _teardown(self) -> None:
        """Unregister the socket from the loop, then close it (never the other way round)."""
        self.closed = True
        if self._registered:
            self._registered = False
            with contextlib.suppress(Exception):  # the loop may already be closed
                self.loop.remove_reader(self._fd)
            if self._wbuf:
                with contextlib.suppress(Exception):
                    self.loop.remove_writer(self._fd)
            self._wbuf = b""
            self.sock.close()

    def close(self) -> None:
        self._keepalive = False
        self._teardown()

    # -- request API -----------------------------------------------------------------------
    def request(self, head: bytes, body: bytes, sink: Sink) -> asyncio.Future:
        self._sink = sink
        self._done = self.loop.create_future()
        self._state = 1
        self._buf = b""
        if self.closed:
            self._done.set_exception(HTTPError(Failure.CONNECTION_CLOSED,
                                               "connection already closed"))
            return self._done
        self._write(head + body)
        return self._done

    def abort(self, error_class: str, message: str) -> None:
        self._fail(error_class, message)

    def _fail(self, error_class: str, message: str) -> None:
        self._keepalive = False
        if self._done is not None and not self._done.done():
            self._done.set_exception(HTTPError(error_class, message))
        self._sink = None
        self._teardown()

    def _finish(self, leftover: bool = False) -> None:
        """The response is complete. ``leftover``: bytes followed it that nobody asked for
        (no pipelining here), so the connection is not reused."""
        self._state = 0
        self._sink = None
        self._buf = b""
        done, self._done = self._done, None
        if leftover:
            self._keepalive = False
        if not self._keepalive:
            self._teardown()
        if done is not None and not done.done():
            done.set_result(None)

    @property
    def reusable(self) -> bool:
        return not self.closed and self._keepalive and self._state == 0


MAX_HEAD = 64 * 1024
_HEAD_END = re.compile(rb"\r?\n\r?\n")
_HEAD_LINE = re.compile(r"\r?\n")
_STATUS_LINE = re.compile(r"HTTP/1\.([0-9]) ([0-9]{3})(?:[ \t][^\x00-\x08\x0a-\x1f\x7f]*)?")
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_BAD_VALUE = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
_DIGITS = re.compile(r"[0-9]{1,19}")
_CHUNK_LINE = re.compile(rb"([0-9A-Fa-f]{1,16})[ \t]*(?:;[^\r\n]*)?\r?\n")
_CHUNK_LINE_PREFIX = re.compile(rb"[0-9A-Fa-f]{1,16}[ \t]*(?:;[^\r\n]{0,4096})?\r?")
_HTTP_PREFIX = b"HTTP/1."


def _check_partial_head(buf: bytes) -> None:
    """Fail now, not at a timeout, when the bytes so far cannot begin a response head."""
    k = min(len(buf), len(_HTTP_PREFIX))
    if buf[:k] != _HTTP_PREFIX[:k]:
        line = buf.split(b"\n", 1)[0][:80]
        raise ProtocolError(Failure.BAD_STATUS, f"not an HTTP/1.x response: {line!r}")
    if len(buf) > MAX_HEAD:
        raise ProtocolError(Failure.BAD_HEADER, "response head larger than 64 KiB")


def _single_chunk(data: bytes) -> bytes | None:
    """The data of ``data`` if it is exactly one whole, non-final chunk; else None.

    A fast path only: None means "unsure" (a partial or final chunk, several chunks, a chunk
    extension) and the caller falls back to the general parser, which accepts the same input.
    """
    eol = data.find(b"\r\n")
    if eol <= 0 or eol > 16:
        return None
    try:
        size = int(data[:eol], 16)
    except ValueError:
        return None
    # exactly eol hex digits: int() also takes "0x", "_", "+", spaces (and leading zeros
    # are left to the general parser)
    if size <= 0 or (size.bit_length() + 3) >> 2 != eol or len(data) != eol + size + 4 \
            or not data.endswith(b"\r\n"):
        return None
    return data[eol + 2 : -2]


def _parse_head(head: bytes) -> tuple[int, dict[str, str], int]:
    """(status, headers by lower-case name, minor version) of a response head, or a
    ProtocolError saying what is wrong with it."""
    lines = _HEAD_LINE.split(head.decode("latin-1"))
    m = _STATUS_LINE.fullmatch(lines[0])
    if m is None:
        raise ProtocolError(Failure.BAD_STATUS, f"not an HTTP/1.x status line: {lines[0][:80]!r}")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if not sep or not _TOKEN.fullmatch(name):
            raise ProtocolError(Failure.BAD_HEADER, f"malformed header line {line[:80]!r}")
        value = value.strip(" \t")
        if _BAD_VALUE.search(value):
            raise ProtocolError(Failure.BAD_HEADER, f"control character in header {name!r}")
        key = name.lower()
        headers[key] = f"{headers[key]}, {value}" if key in headers else value
    return int(m.group(2)), headers, int(m.group(1))


def _framing(status: int, headers: dict[str, str], minor: int) -> tuple[int, int, bool]:
    """(parser state for the body, Content-Length, keep-alive) of a response head."""
    conn = {x.strip().lower() for x in headers.get("connection", "").split(",")}
    keepalive = "close" not in conn if minor >= 1 else "keep-alive" in conn
    if status in (204, 304):
        return 0, 0, keepalive
    te = headers.get("transfer-encoding")
    if te is not None:
        codings = [x.strip().lower() for x in te.split(",")]
        if codings != ["chunked"]:
            raise ProtocolError(Failure.BAD_HEADER, f"unsupported Transfer-Encoding {te[:60]!r} "
                                "(only chunked)")
        return 2, 0, keepalive
    cl = headers.get("content-length")
    if cl is not None:
        values = {x.strip() for x in cl.split(",")}
        if len(values) != 1 or not _DIGITS.fullmatch(next(iter(values))):
            raise ProtocolError(Failure.BAD_HEADER, f"Content-Length is not a number: {cl[:60]!r}")
        n = int(next(iter(values)))
        return (4, n, keepalive) if n else (0, 0, keepalive)
    return 5, 0, False


class Pool:
    """Keep-alive connections to one host:port, opened on demand, reused when idle.

    With ``tls`` (https) every connection runs a TLS handshake after connecting; the SSL
    context is made on first use, in the process that uses it.
    """

    def __init__(self, host: str, port: int, connect_timeout: float = 30.0,
                 clock: ArrivalClock | None = None, tls: TLSConfig | None = None):
        self.host = host
        self.port = port
        self.connect_timeout = connect_timeout
        self.clock = clock if clock is not None else ArrivalClock()
        self.tls = tls
        self._ctx = None
        self._idle: list[ClientConnection] = []
        self._addrs: list | None = None
        self._lookup: asyncio.Future | None = None
        self.opened = 0

    async def acquire(self) -> ClientConnection:
        while self._idle:
            conn = self._idle.pop()
            if conn.reusable:
                return conn
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.connect_timeout
        try:
            conn = await self._connect(loop, deadline)
        except TimeoutError as exc:
            raise HTTPError(Failure.CONNECT_TIMEOUT,
                            f"connect to {self.host}:{self.port} timed out") from exc
        except OSError as exc:
            raise HTTPError(Failure.CONNECT_ERROR, f"cannot connect to {self.host}:{self.port}: "
                            f"{exc.strerror or exc}") from exc
        self.opened += 1
        return conn

    async def _resolve(self, loop: asyncio.AbstractEventLoop, deadline: float) -> list:
        """Addresses of host:port, looked up once per pool (a burst of first connects shares
        one lookup; a numeric address needs none)."""
        if self._addrs is not None:
            return self._addrs
        try:
            self._addrs = socket.getaddrinfo(self.host, self.port, type=socket.SOCK_STREAM,
                                             flags=socket.AI_NUMERICHOST)
            return self._addrs
        except socket.gaierror:
            pass
        if self._lookup is None:
            self._lookup = asyncio.ensure_future(
                loop.getaddrinfo(self.host, self.port, type=socket.SOCK_STREAM))
        try:
            self._addrs = await asyncio.wait_for(asyncio.shield(self._lookup),
                                                 max(0.0, deadline - loop.time()))
        except OSError:
            self._lookup = None  # let a later connect try again
            raise
        except asyncio.TimeoutError:  # noqa: UP041 - Python 3.10: not the builtin, not OSError
            self._lookup = None
            raise TimeoutError("name lookup timed out") from None
        return self._addrs

    async def _connect(self, loop: asyncio.AbstractEventLoop, deadline: float) -> ClientConnection:
        addrs = await self._resolve(loop, deadline)
        err: OSError | None = None
        for family, type_, proto, _, addr in addrs:  # in order, like create_connection
            sock = socket.socket(family, type_, proto)
            try:
                sock.setblocking(False)
                # stamping from the start: bytes queued during a TLS handshake (TLS 1.3
                # session tickets) would otherwise be the one read without a kernel stamp
                self.clock.enable(sock)
                await sock_connect(loop, sock, addr, deadline)
                session = None if self.tls is None else await self._handshake(loop, sock, deadline)
            except OSError as exc:  # TimeoutError included: the deadline is shared
                sock.close()
                err = exc
                if isinstance(exc, TimeoutError):
                    raise
                continue
            except BaseException:  # cancelled, or a TLS failure: don't leak the socket
                sock.close()
                raise
            return ClientConnection(sock, loop, self.clock, session)
        raise err or OSError(f"no address for {self.host}")

    async def _handshake(self, loop, sock: socket.socket, deadline: float) -> TLSSession:
        """TLS on a connected socket; every failure is a RequestFailure of a TLS class."""
        if self._ctx is None:
            self._ctx = self.tls.context()
        try:
            return await handshake(loop, sock, self._ctx, self.host, deadline)
        except TimeoutError as exc:
            raise HTTPError(Failure.TLS_ERROR, f"TLS handshake with {self.host}:{self.port} "
                            f"timed out after {self.connect_timeout:g}s (is it serving "
                            "https?)") from exc
        except OSError as exc:
            raise HTTPError(Failure.CONNECTION_CLOSED, f"connection to {self.host}:{self.port} "
                            f"lost during the TLS handshake: {exc}") from exc

    def release(self, conn: ClientConnection) -> None:
        if conn.reusable:
            self._idle.append(conn)
        elif not conn.closed:
            conn.close()

    async def exchange(self, head: bytes, body: bytes, sink, inflight: dict,
                       start: int) -> int:
        """One request on a pooled connection, its answer streamed into ``sink``; a failure
        is recorded on the sink (its first class wins), never raised. While the answer is
        awaited the connection is in ``inflight`` (connection -> ``start``), where a stall
        watcher finds it. Returns when the request was sent (0 when no connection was got).
        """
        sent = 0
        try:
            conn = await self.acquire()
            sent = _now()
            fut = conn.request(head, body, sink)
            inflight[conn] = start
            try:
                await fut
            finally:
                inflight.pop(conn, None)
            self.release(conn)
            sink.finish()
        except HTTPError as exc:
            if not sink.error_class:
                sink.error_class, sink.error = exc.error_class, str(exc)
        return sent

    def close(self) -> None:
        for conn in self._idle:
            conn.close()
        self._idle.clear()


async def sock_connect(loop: asyncio.AbstractEventLoop, sock: socket.socket, addr,
                       deadline: float) -> None:
    """Connect a non-blocking socket by ``deadline`` (loop time), or raise OSError/TimeoutError.

    Why not ``loop.sock_connect``: under uvloop, 256 of them to a loopback server took 22-30 ms
    to complete, against ~11 ms for a ``connect`` call, a writer callback and one future. And
    a connect that has already completed returns at once (see below), so in a closed loop's
    first wave each request goes out before the next connection is opened instead of all of
    them waiting for the last connect: at C=256 that wait was ~40 ms of every first-wave TTFT.
    """
    err = sock.connect_ex(addr)
    if err in _CONNECT_PENDING:
        # Asking again costs one syscall and says EISCONN when the handshake completed inside
        # the first call, as it usually does on loopback: the request can go out right away
        # instead of after the loop's next poll (and after every other pending connect).
        err = sock.connect_ex(addr)
        if err == errno.EISCONN:
            return
        if err == errno.EALREADY:
            err = errno.EINPROGRESS
    if err in _CONNECT_PENDING:
        fut = loop.create_future()
        fd = sock.fileno()
        loop.add_writer(fd, _resolve_future, fut, None)
        timer = loop.call_at(deadline, _resolve_future, fut, TimeoutError("connect timed out"))
        try:
            await fut
        finally:
            timer.cancel()
            loop.remove_writer(fd)
        err = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
    if err:
        raise OSError(err, os.strerror(err))


_CONNECT_PENDING = frozenset((errno.EINPROGRESS, errno.EAGAIN, errno.EWOULDBLOCK, errno.EINTR))


def _resolve_future(fut: asyncio.Future, exc: BaseException | None) -> None:
    if not fut.done():
        if exc is None:
            fut.set_result(None)
        else:
            fut.set_exception(exc)


def build_head(method: str, host: str, port: int, path: str, body_len: int,
               extra: dict[str, str] | None = None) -> bytes:
    """A request head; a GET without a body carries no content headers."""
    authority = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    lines = [f"{method} {path} HTTP/1.1", f"Host: {authority}"]
    if method != "GET" or body_len:
        lines += ["Content-Type: application/json", f"Content-Length: {body_len}"]
    lines.append("Accept: text/event-stream, application/json")
    for k, v in (extra or {}).items():
        lines.append(f"{k}: {v}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def check_header(name: str, value: str) -> str | None:
    """Why ``name: value`` cannot be sent as a header (None if it can)."""
    if not _TOKEN.fullmatch(name):
        return f"header name {name!r} is not an HTTP token"
    if _BAD_VALUE.search(value):
        return f"header {name} contains a line break or control character"
    try:
        value.encode("latin-1")
    except UnicodeEncodeError:
        return f"header {name} has characters outside Latin-1"
    return None


Callback = Callable[[bytes, int], None]
