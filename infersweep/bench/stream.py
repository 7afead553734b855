"""One streamed request: turns arrival-stamped SSE events into a per-request record.

A "chunk" is an event whose JSON has non-empty ``choices`` (InferenceX's token chunk: chunk
gaps and E2EL use every one); ``output_tokens`` comes from the last ``usage``. A stream that
ends without ``usage`` is a failure (``missing_usage``), never a silent zero.

The tokens a chunk carries come from what that chunk carries. While every chunk with text has
also carried ``usage`` (the server reports it per chunk: ``continuous_usage_stats``), a chunk
carries its usage delta. Otherwise usage is a running total the server sends late (often only
in the last chunk, next to ``choices``: ``transformers serve``), which says nothing about that
chunk: a chunk with text then carries an unknown number of tokens (-1, at least one), and a
chunk without text carries none (0): a role-only first delta, an empty final chunk. So a final
chunk is never a token gap, and TTFT can be taken at the first chunk that carries a token.

Data that breaks the format (not JSON, ``choices`` not a list of objects, token counts that are
not non-negative integers, text that is not a string) raises :class:`ProtocolError`: the
connection fails the request at once. Only well-typed values reach the record.
"""

from __future__ import annotations

import os

from infersweep.bench import runtime
from infersweep.bench.failures import Failure, ProtocolError
from infersweep.bench.httpconn import Sink
from infersweep.bench.sse import SSEParser

_loads = runtime.loads


class StreamSink(Sink):
    __slots__ = ("sse", "status", "t_headers", "chunk_t", "chunk_tok", "usage_out",
                 "usage_in", "cached_in", "finish_reason", "last_event_t", "done",
                 "error_class", "error", "err_body", "text_chunks", "keep_text", "text", "_cum",
                 "_per_chunk", "chat", "max_output")

    def __init__(self, keep_text: bool = False, chat: bool = False,
                 max_output: int | None = None):
        self.sse = SSEParser()
        self.status = 0
        self.t_headers = 0
        self.chunk_t: list[int] = []   # arrival (ns) of each token chunk
        self.chunk_tok: list[int] = []  # tokens carried by each chunk (0 = none, -1 = unknown)
        self.usage_out: int | None = None
        self.usage_in: int | None = None
        self.cached_in: int | None = None  # usage.prompt_tokens_details.cached_tokens
        self.finish_reason: str | None = None
        self.last_event_t = 0
        self.done = False
        self.error_class = ""
        self.error = ""
        self.err_body = b""
        self.text_chunks = 0  # chunks with non-empty text (client-side token estimate)
        self.keep_text = keep_text
        self.text: list[str] = []
        self._cum = 0
        self._per_chunk = True  # every chunk with text so far came with usage
        self.chat = chat
        self.max_output = max_output  # the max_tokens the request asked for (None: unchecked)

    def on_headers(self, status, headers, t):
        self.status = status
        self.t_headers = t

    def on_body(self, data, t):
        if self.status != 200:
            if len(self.err_body) < 2048:
                self.err_body += data[: 2048 - len(self.err_body)]
            return
        one = self.sse.single_data(data)  # the usual read: one whole `data:` event
        if one is not None:
            self._event(one, "message", t)
            return
        for ev in self.sse.feed(data):
            self._event(ev.data, ev.event, t)

    def _event(self, data: bytes, etype: str, t: int) -> None:
        if self.done or self.error_class:
            return
        if data == b"[DONE]":
            self.done = True
            return
        try:
            obj = _loads(data)
        except runtime.JSONDecodeError:
            self._protocol(Failure.BAD_JSON, f"event data is not JSON: {data[:120]!r}")
        if obj.__class__ is not dict:
            self._protocol(Failure.BAD_JSON, f"event data is not a JSON object: {data[:120]!r}")
        if etype == "error" or "error" in obj or obj.get("object") == "error":
            err = obj.get("error", obj)
            msg = err.get("message", str(err)) if isinstance(err, dict) else str(err)
            self._set_error(Failure.STREAM_ERROR, f"error event mid-stream: {msg}"[:300])
            return
        self.last_event_t = t
        usage = obj.get("usage")
        if usage is None:
            ct = pt = None
        elif usage.__class__ is dict:
            ct = usage.get("completion_tokens")
            pt = usage.get("prompt_tokens")
            if ((ct is not None and (ct.__class__ is not int or ct < self._cum))
                    or (pt is not None and (pt.__class__ is not int or pt < 0))):
                self._bad_usage(ct, pt)
            details = usage.get("prompt_tokens_details")
            if details is not None:
                self._cached(details)
        else:
            self._protocol(Failure.BAD_FIELD, f"usage is not an object: {usage!r:.80}")
        choices = obj.get("choices")
        if choices:
            if choices.__class__ is not list:
                self._protocol(Failure.BAD_FIELD, f"choices is not a list: {data[:120]!r}")
            c0 = choices[0]
            if c0.__class__ is not dict or (len(choices) > 1 and not all(
                    c.__class__ is dict for c in choices)):
                self._protocol(Failure.BAD_FIELD, f"choices is not a list of objects: "
                               f"{data[:120]!r}")
            if self.chat:
                delta = c0.get("delta")
                if delta is None:
                    txt = None
                elif delta.__class__ is dict:
                    txt = delta.get("content")
                else:
                    self._protocol(Failure.BAD_FIELD, f"choices[0].delta is not an object: "
                                   f"{data[:120]!r}")
            else:
                txt = c0.get("text")
            if txt is not None and txt.__class__ is not str:
                self._protocol(Failure.BAD_FIELD, f"choices[0].{'delta.content' if self.chat else 'text'}"
                               f" is not a string: {data[:120]!r}")
            if ct is not None and self._per_chunk:
                n = ct - self._cum  # usage per chunk: the delta is what this chunk carries
            elif txt:
                n = -1  # text, but no count of its own: at least one token
                if ct is None:
                    self._per_chunk = False
            else:
                n = 0  # no text and no usage of its own: a role-only or empty final chunk
            fin = c0.get("finish_reason")
            if fin.__class__ is str:
                self.finish_reason = fin
            self.chunk_t.append(t)
            self.chunk_tok.append(n)
            if txt:
                self.text_chunks += 1
                if self.keep_text:
                    self.text.append(txt)
        elif choices is not None and choices.__class__ is not list:
            self._protocol(Failure.BAD_FIELD, f"choices is not a list: {data[:120]!r}")
        if ct is not None:
            self.usage_out = self._cum = ct
        if pt is not None:
            self.usage_in = pt

    def _cached(self, details) -> None:
        """``usage.prompt_tokens_details.cached_tokens``: prompt tokens the engine's prefix
        cache served (vLLM, SGLang and OpenAI report it; absent or null means not reported)."""
        if details.__class__ is not dict:
            self._protocol(Failure.BAD_FIELD, f"usage.prompt_tokens_details is not an object: "
                           f"{details!r:.80}")
        cached = details.get("cached_tokens")
        if cached is None:
            return
        if cached.__class__ is not int or cached < 0:
            self._protocol(Failure.BAD_FIELD, f"usage.prompt_tokens_details.cached_tokens is "
                           f"not a non-negative integer: {cached!r:.40}")
        self.cached_in = cached

    def _bad_usage(self, ct, pt):
        for name, v in (("completion_tokens", ct), ("prompt_tokens", pt)):
            if v is not None and (v.__class__ is not int or v < 0):
                self._protocol(Failure.BAD_FIELD, f"usage.{name} is not a non-negative "
                               f"integer: {v!r:.40}")
        self._protocol(Failure.BAD_FIELD, f"usage.completion_tokens went down from "
                       f"{self._cum} to {ct}")

    def _protocol(self, cls: str, msg: str):
        self._set_error(cls, msg)
        raise ProtocolError(cls, msg)

    def _set_error(self, cls: str, msg: str) -> None:
        self.error_class = str(cls)
        key = os.environ.get("OPENAI_API_KEY")
        if key and key in msg:  # a server that echoes the key back (in a 401 body, say)
            msg = msg.replace(key, "<OPENAI_API_KEY>")
        self.error = msg

    def finish(self) -> None:
        """Classify the finished stream (called once the HTTP body is complete)."""
        if self.error_class:
            return
        if self.status != 200:
            cls = Failure.HTTP_4XX if 400 <= self.status < 500 else Failure.HTTP_5XX
            if self.status < 400:
                cls = Failure.HTTP_OTHER
            body = self.err_body.decode("utf-8", "replace").strip().replace("\n", " ")
            self._set_error(cls, f"HTTP {self.status}: {body[:300]}")
            return
        tail = self.sse.pending().strip()
        if tail and not tail.startswith(b":"):
            # a final event without its blank-line terminator: dispatch it (servers that omit it)
            try:
                for ev in SSEParser().feed(tail + b"\n\n"):
                    self._event(ev.data, ev.event, self.last_event_t)
            except ProtocolError:
                return  # classified by _protocol
            if self.error_class:
                return
        if not self.chunk_t:
            self._set_error(Failure.NO_TOKENS, "stream ended without any token chunk")
        elif self.usage_out is None:
            self._set_error(Failure.MISSING_USAGE,
                            "stream ended without a usage object (completion_tokens unknown)")
        elif self.max_output is not None and self.usage_out > self.max_output:
            # no engine returns more than max_tokens: the count, or the engine, is wrong
            self._set_error(Failure.OUTPUT_OVER_LIMIT,
                            f"usage.completion_tokens {self.usage_out} exceeds the "
                            f"{self.max_output} tokens the request allowed (in "
                            f"{len(self.chunk_t)} chunks)")
