"""How much of a streamed answer the eval client reads before it gives up on the stream.

A GSM8K answer is a few hundred tokens. A server that streams past the requested
``max_completion_tokens`` (it ignores the limit, or loops) or sends bytes that never become
an answer (keep-alive comments, empty chunks) would otherwise hold its request until the
attempt's timeout. :class:`CappedSink` stops reading and fails the request
(``eval.answer_too_long``, not retried: at temperature 0 the same request streams the same
way again) once the answer exceeds the requested tokens by a margin, or the response body
exceeds a byte cap. Tokens are counted from ``usage.completion_tokens`` where the server
sends it with the chunks, else one per chunk that carries text (a server never sends more
text chunks than tokens).

The sink also keeps the time of the last *progress*: the response head, or a complete stream
event. The transport's watchdog cuts an attempt that makes no progress for
``--idle-timeout`` seconds, whether nothing arrives at all or bytes trickle in too slowly to
ever complete an event.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from infersweep.bench.stream import StreamSink

TOO_LONG = "eval.answer_too_long"
TOKEN_MARGIN = 0.10       # a server may overshoot the limit a little (a final multi-token chunk)
MIN_TOKEN_MARGIN = 32
BYTES_PER_TOKEN = 1024    # a streamed token costs ~150-400 bytes of SSE and JSON framing
BASE_BYTES = 64 * 1024    # the first chunk (role, ids), usage, [DONE], an error body


@dataclass(frozen=True)
class AnswerLimits:
    max_tokens: int  # the request's max_completion_tokens

    @property
    def tokens(self) -> int:
        return self.max_tokens + max(MIN_TOKEN_MARGIN, math.ceil(self.max_tokens * TOKEN_MARGIN))

    @property
    def bytes(self) -> int:
        return BASE_BYTES + self.tokens * BYTES_PER_TOKEN


class CappedSink(StreamSink):
    __slots__ = ("limits", "body_bytes", "progress_t")

    def __init__(self, limits: AnswerLimits, chat: bool):
        super().__init__(keep_text=True, chat=chat)
        self.limits = limits
        self.body_bytes = 0
        self.progress_t = 0  # arrival (ns) of the head or the last complete event

    def on_headers(self, status, headers, t):
        super().on_headers(status, headers, t)
        self.progress_t = t

    def on_body(self, data, t):
        self.body_bytes += len(data)
        lim = self.limits
        if self.body_bytes > lim.bytes:
            self._protocol(TOO_LONG, f"stopped reading: the response body passed {lim.bytes:,} "
                           f"bytes, the cap for max_completion_tokens {lim.max_tokens:,} "
                           f"({self.text_chunks:,} text chunks so far)")
        events, done = len(self.chunk_t), self.done
        super().on_body(data, t)
        if self.last_event_t > self.progress_t or len(self.chunk_t) != events \
                or self.done != done:
            self.progress_t = t
        tokens = max(self.text_chunks, self.usage_out or 0)
        if tokens > lim.tokens:
            self._protocol(TOO_LONG, f"stopped reading: the answer ran to {tokens:,} tokens, "
                           f"past max_completion_tokens {lim.max_tokens:,} (allowed up to "
                           f"{lim.tokens:,})")
