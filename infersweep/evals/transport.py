"""Eval requests through the benchmark client's HTTP/SSE transport, with counted retries.

Every request streams (``stream: true``), so each answer also has a TTFT and an end-to-end
time. A request is tried up to ``max_attempts`` times; every failed attempt is kept in the
request's record with its failure class and how long it took, so a stall (no progress, the
response head or a complete stream event, for ``idle_timeout`` seconds: silence, or bytes
trickling in) that succeeds on retry is counted and timed rather than hidden. An answer that
runs past its token or byte cap is cut at once (:mod:`infersweep.evals.answercap`). A request
that exhausts its attempts fails alone: its record says why, the others go on.

A response that is well formed HTTP but not a usable answer is a named failure, never an
empty string that would be scored as a wrong answer: a stream with no text at all is
``eval.empty_response``; ``protocol.*`` classes come from the SSE/JSON parser.
"""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import dataclass, field

from infersweep.bench.failures import Failure
from infersweep.bench.httpconn import Pool, build_head
from infersweep.bench.tls import TLSConfig
from infersweep.evals.answercap import TOO_LONG, AnswerLimits, CappedSink

EMPTY_RESPONSE = "eval.empty_response"
# failure classes not worth another attempt: the same request would fail the same way
NOT_RETRIED = frozenset({Failure.HTTP_4XX.value, Failure.TLS_VERIFY.value, TOO_LONG})
RETRIED_4XX = (408, 429)
_now = time.monotonic_ns

# The default timeouts, fitted to GSM8K (docs/evals.md says why): a stall is a minute without
# progress; an attempt may take the queue and prefill (a minute) plus the longest answer the
# request allows (max_completion_tokens) at a slow 10 tokens a second.
IDLE_TIMEOUT_S = 60.0
FIRST_TOKEN_ALLOWANCE_S = 60.0
SLOWEST_DECODE_TPS = 10.0
DEFAULT_MAX_TOKENS = 5376


def default_request_timeout(max_tokens: int) -> float:
    """Seconds an attempt may take by default: 5,376 tokens give 598 s, 512 give 111 s."""
    return round(FIRST_TOKEN_ALLOWANCE_S + max_tokens / SLOWEST_DECODE_TPS, 1)


@dataclass(frozen=True)
class Endpoint:
    host: str
    port: int
    path: str                 # e.g. /v1/completions
    chat: bool
    tls: TLSConfig | None = None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = 5
    request_timeout: float = default_request_timeout(DEFAULT_MAX_TOKENS)  # a whole attempt
    idle_timeout: float = IDLE_TIMEOUT_S  # seconds without progress: a stalled attempt
    backoff: float = 1.0              # first wait between attempts; doubles, capped at 10x
    backoff_cap: float = 10.0

    def delay(self, failed_attempts: int) -> float:
        return min(self.backoff * (2 ** (failed_attempts - 1)), self.backoff * self.backoff_cap)


@dataclass
class Answer:
    """The outcome of one request: its text (when ``ok``) and every attempt."""

    ok: bool
    text: str
    attempts: list[dict]
    error_class: str = ""
    error: str = ""
    ttft_s: float | None = None
    e2el_s: float | None = None
    output_tokens: int | None = None

    @property
    def retries(self) -> int:
        return len(self.attempts) - 1

    def record(self) -> dict:
        failed = [a for a in self.attempts if a["error_class"]]
        return {"ok": self.ok, "text": self.text, "error_class": self.error_class,
                "error": self.error, "attempts": self.attempts, "retries": self.retries,
                # time lost to failed attempts and the waits after them
                "retry_time_s": round(sum(a["duration_s"] + a.get("backoff_s", 0.0)
                                          for a in failed), 6),
                "ttft_s": self.ttft_s, "e2el_s": self.e2el_s,
                "output_tokens": self.output_tokens}


def auth_headers() -> dict[str, str]:
    key = os.environ.get("OPENAI_API_KEY")
    return {"Authorization": f"Bearer {key}"} if key else {}


class _Slot:
    """Where :meth:`Pool.exchange` registers its connection while the answer is awaited
    (``slot[conn] = start``, then ``slot.pop(conn, None)``): the transport's table of
    attempts in flight, with this attempt's sink beside the start, for the watchdog."""

    __slots__ = ("table", "sink")

    def __init__(self, table: dict, sink: CappedSink):
        self.table, self.sink = table, sink

    def __setitem__(self, conn, start: int) -> None:
        self.table[conn] = (start, self.sink)

    def pop(self, conn, default=None):
        return self.table.pop(conn, default)


class EvalTransport:
    """Sends request bodies on a keep-alive pool; one instance per event loop."""

    def __init__(self, endpoint: Endpoint, policy: RetryPolicy, limits: AnswerLimits,
                 connect_timeout: float = 30.0):
        self.ep = endpoint
        self.policy = policy
        self.limits = limits
        self.pool = Pool(endpoint.host, endpoint.port, connect_timeout=connect_timeout,
                         tls=endpoint.tls)
        self.inflight: dict = {}  # connection -> (start, sink)
        self._watch: asyncio.Task | None = None

    async def __aenter__(self) -> EvalTransport:
        self._watch = asyncio.ensure_future(self._watchdog())
        return self

    async def __aexit__(self, *exc) -> None:
        if self._watch is not None:
            self._watch.cancel()
        self.pool.close()

    async def send(self, body: bytes) -> Answer:
        attempts: list[dict] = []
        p = self.policy
        while True:
            a, sink, t = await self._attempt(body)
            attempts.append(a)
            if not a["error_class"]:
                text = "".join(sink.text)
                first = sink.chunk_t[0] if sink.chunk_t else None
                return Answer(True, text, attempts, ttft_s=None if first is None else
                              round((first - t[0]) / 1e9, 6), e2el_s=a["duration_s"],
                              output_tokens=sink.usage_out)
            retry = (a["error_class"] not in NOT_RETRIED or a["status"] in RETRIED_4XX)
            if not retry or len(attempts) >= p.max_attempts:
                return Answer(False, "", attempts, a["error_class"], a["error"])
            wait = p.delay(len(attempts))
            a["backoff_s"] = wait
            await asyncio.sleep(wait)

    async def _attempt(self, body: bytes) -> tuple[dict, CappedSink, tuple[int]]:
        ep = self.ep
        head = build_head("POST", ep.host, ep.port, ep.path, len(body), ep.headers)
        sink = CappedSink(self.limits, chat=ep.chat)
        start = _now()
        await self.pool.exchange(head, body, sink, _Slot(self.inflight, sink), start)
        cls, err = sink.error_class, sink.error
        if cls == Failure.MISSING_USAGE:  # an answer needs text, not a token count
            cls, err = "", ""
        if not cls and not any(sink.text):
            cls, err = EMPTY_RESPONSE, ("HTTP 200 with no answer text (every chunk's "
                                        f"{'delta.content' if ep.chat else 'text'} was empty "
                                        "or null)")
        dur = round((_now() - start) / 1e9, 6)
        return ({"error_class": cls, "error": err, "status": sink.status, "duration_s": dur},
                sink, (start,))

    async def _watchdog(self) -> None:
        p = self.policy
        req_ns, idle_ns = int(p.request_timeout * 1e9), int(p.idle_timeout * 1e9)
        tick = min(0.25, p.idle_timeout / 4, p.request_timeout / 4)
        while True:
            await asyncio.sleep(tick)
            now = _now()
            for conn, (start, sink) in list(self.inflight.items()):
                progress = max(sink.progress_t, start)
                if now - start > req_ns:
                    conn.abort(Failure.TIMEOUT, f"attempt exceeded --request-timeout "
                               f"{p.request_timeout:g}s")
                elif now - progress > idle_ns:
                    if conn.last_activity > progress:  # bytes, but never a whole event
                        why = (f"bytes trickled in ({sink.body_bytes:,} body bytes in all) "
                               "without completing a stream event")
                    else:
                        why = "no bytes"
                    conn.abort(Failure.TIMEOUT, f"stalled: {why} for --idle-timeout "
                               f"{p.idle_timeout:g}s")
