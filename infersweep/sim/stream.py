"""One simulated response stream: SSE chunk bytes and the ground-truth send clock."""

from __future__ import annotations

import time

import orjson

_now = time.monotonic_ns


class SimStream:
    """Writes tokens as OpenAI SSE chunks and records when each chunk was written."""

    def __init__(self, rid: int, resp, *, model: str, chat: bool, prompt_tokens: int,
                 max_tokens: int, arrival_ns: int, include_usage: bool, continuous_usage: bool,
                 stream: bool, words: list[str] | None = None, style=None):
        self.rid = rid
        self.resp = resp
        self.chat = chat
        self.prompt_tokens = prompt_tokens
        self.max_tokens = max_tokens
        self.arrival_ns = arrival_ns
        self.include_usage = include_usage
        self.continuous_usage = continuous_usage
        self.stream = stream
        self.words = words  # eval mode: the answer, one word per token
        self.total = max_tokens if words is None else min(max_tokens, len(words))
        self.sent = 0
        self.send_ns: list[int] = []
        self.done = False
        self.admit_ns = 0
        self.prefill_left = prompt_tokens
        self.pending = 0  # tokens generated but not yet flushed (stream interval > 1)
        self.style = style
        # the KV model's view of this request (see model.Engine and kvcache.py)
        self.page_hashes: list[int] = []
        self.kv_hold = None
        self.cached_tokens = 0
        self.report_cached = False  # prefix caching on: usage says how many prompt tokens hit
        self.ready_ns = 0
        m = orjson.dumps(model).decode()
        if chat:
            self._head = (f'{{"id":"chatcmpl-{rid}","object":"chat.completion.chunk","created":0,'
                          f'"model":{m},"choices":[').encode()
        else:
            self._head = (f'{{"id":"cmpl-{rid}","object":"text_completion","created":0,'
                          f'"model":{m},"choices":[').encode()
        self._text: list[str] = []
        self.on_done = None

    @property
    def finished_generating(self) -> bool:
        return self.sent + self.pending >= self.total

    def _token_text(self, k: int) -> str:
        if self.words is not None:
            return self.words[k] if k == 0 else " " + self.words[k]
        return " tok"

    def _chunk(self, first: int, n: int, last: bool) -> bytes:
        text = "".join(self._token_text(first + j) for j in range(n))
        if not self.stream:
            self._text.append(text)
            return b""
        t = orjson.dumps(text)
        fin = b'"stop"' if last and self.words is not None and self.total < self.max_tokens else (
            b'"length"' if last else b"null")
        if self.chat:
            role = b'"role":"assistant",' if first == 0 else b""
            choice = b'{"index":0,"delta":{' + role + b'"content":' + t + b'},"finish_reason":' + fin + b"}"
        else:
            choice = b'{"index":0,"text":' + t + b',"logprobs":null,"finish_reason":' + fin + b"}"
        usage = b""
        if self.continuous_usage and self.include_usage:
            usage = self._usage(first + n)
        return b"data: " + self._head + choice + b"]" + usage + b"}\n\n"

    def _usage(self, completion: int) -> bytes:
        details = (b',"prompt_tokens_details":{"cached_tokens":%d}' % self.cached_tokens
                   if self.report_cached else b"")
        return (b',"usage":{"prompt_tokens":%d,"total_tokens":%d,"completion_tokens":%d%b}'
                % (self.prompt_tokens, self.prompt_tokens + completion, completion, details))

    def emit(self, n: int, interval: int = 1) -> bool:
        """Generate ``n`` tokens; flush a chunk every ``interval`` tokens. True when done."""
        if self.done:
            return True
        n = min(n, self.total - self.sent - self.pending)
        self.pending += n
        last = self.sent + self.pending >= self.total
        if self.pending >= interval or last:
            k, self.pending = self.pending, 0
            data = self._chunk(self.sent, k, last)
            self.sent += k
            style = self.style
            if style is not None:
                data = style.transform(self, data, last)
                if data is None:  # the style ended or abandoned the stream
                    return True
            self.send_ns.append(_now())
            if self.stream and data:
                if last:
                    self._finish(data)
                    return True
                self.resp.write(data)
        if last:
            self._finish(b"")
            return True
        return False

    def _finish(self, data: bytes) -> None:
        self.done = True
        if self.on_done is not None:
            self.on_done(self)
        if not self.stream:
            self.resp.json(200, self.full_response())
            return
        tail = b""
        if self.include_usage and not (self.style and self.style.omit_usage):
            tail = b"data: " + self._head + b"]" + self._usage(self.sent) + b"}\n\n"
        self.resp.write(data + tail + b"data: [DONE]\n\n")
        self.resp.end_stream()

    def full_response(self) -> dict:
        text = "".join(self._text)
        fin = "stop" if self.words is not None and self.total < self.max_tokens else "length"
        usage = {"prompt_tokens": self.prompt_tokens, "completion_tokens": self.sent,
                 "total_tokens": self.prompt_tokens + self.sent}
        if self.report_cached:
            usage["prompt_tokens_details"] = {"cached_tokens": self.cached_tokens}
        if self.chat:
            return {"id": f"chatcmpl-{self.rid}", "object": "chat.completion", "created": 0,
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                 "finish_reason": fin}], "usage": usage}
        return {"id": f"cmpl-{self.rid}", "object": "text_completion", "created": 0,
                "choices": [{"index": 0, "text": text, "finish_reason": fin}], "usage": usage}

    def truth(self) -> dict:
        t = {"rid": self.rid, "arrival_ns": self.arrival_ns, "send_ns": self.send_ns,
             "prompt_tokens": self.prompt_tokens, "completion_tokens": self.sent}
        if self.report_cached:
            t["cached_tokens"] = self.cached_tokens
        return t
