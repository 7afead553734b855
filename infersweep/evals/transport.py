"""Eval requests through the benchmark client's HTTP/SSE transport, with counted retries.

Every request streams (``stream: true``), so each answer also has a TTFT and an end-to-end
time. A request is tried up to ``max_attempts`` times; every failed attempt is kept in the
request's record with its failure class and how long it took, so a stall (no byte for
``idle_timeout`` seconds) that succeeds on retry is counted and timed rather than hidden. A
request that exhausts its attempts fails alone: its record says why, the others go on.

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
from infersweep.bench.stream import StreamSink
from infersweep.bench.tls import TLSConfig

EMPTY_RESPONSE = "eval.empty_response"
# failure classes worth another attempt: the server may answer the same request next time
NOT_RETRIED = frozenset({Failure.HTTP_4XX.value, Failure.TLS_VERIFY.value})
RETRIED_4XX = (408, 429)
_now = time.monotonic_ns


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
    request_timeout: float = 1800.0   # seconds for a whole attempt
    idle_timeout: float = 600.0       # seconds without a byte: a stalled attempt
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


class EvalTransport:
    """Sends request bodies on a keep-alive pool; one instance per event loop."""

    def __init__(self, endpoint: Endpoint, policy: RetryPolicy, connect_timeout: float = 30.0):
        self.ep = endpoint
        self.policy = policy
        self.pool = Pool(endpoint.host, endpoint.port, connect_timeout=connect_timeout,
                         tls=endpoint.tls)
        self.inflight: dict = {}
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

    async def _attempt(self, body: bytes) -> tuple[dict, StreamSink, tuple[int]]:
        ep = self.ep
        head = build_head("POST", ep.host, ep.port, ep.path, len(body), ep.headers)
        sink = StreamSink(keep_text=True, chat=ep.chat)
        start = _now()
        await self.pool.exchange(head, body, sink, self.inflight, start)
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
            for conn, start in list(self.inflight.items()):
                if now - start > req_ns:
                    conn.abort(Failure.TIMEOUT, f"attempt exceeded --request-timeout "
                               f"{p.request_timeout:g}s")
                elif now - max(conn.last_activity, start) > idle_ns:
                    conn.abort(Failure.TIMEOUT, f"stalled: no bytes for --idle-timeout "
                               f"{p.idle_timeout:g}s")
