"""Failure injection and wire-format variations, chosen per request from a seeded RNG."""

from __future__ import annotations

import random
from dataclasses import dataclass

import orjson

ERROR_OBJECT = {"object": "error", "message": "simulated engine failure mid-stream",
                "type": "InternalServerError", "param": None, "code": 500}
ERROR_EVENT = b"data: " + orjson.dumps(ERROR_OBJECT) + b"\n\n"


@dataclass
class FaultConfig:
    fail_rate: float = 0.0           # HTTP 500 before any byte of the stream
    midstream_error_rate: float = 0.0  # an error object half-way, then [DONE]
    drop_rate: float = 0.0           # connection aborted half-way
    hang_rate: float = 0.0           # stream stops half-way and never ends
    eval_hang_rate: float = 0.0      # the same, only for questions answered from the key
    omit_usage: bool = False         # no usage object at all
    sse_comments: bool = False       # ': keep-alive' comment before every event
    crlf: bool = False               # '\r\n' line ends
    seed: int = 0

    @property
    def any(self) -> bool:
        return bool(self.fail_rate or self.midstream_error_rate or self.drop_rate or
                    self.hang_rate or self.omit_usage or self.sse_comments or self.crlf)


class Style:
    __slots__ = ("kind", "omit_usage", "comments", "crlf")

    def __init__(self, kind: str, cfg: FaultConfig):
        self.kind = kind
        self.omit_usage = cfg.omit_usage
        self.comments = cfg.sse_comments
        self.crlf = cfg.crlf

    def transform(self, stream, data: bytes, last: bool) -> bytes | None:
        if self.kind and stream.sent >= max(1, stream.total // 2):
            stream.done = True
            if stream.on_done is not None:
                stream.on_done(stream)
            if self.kind == "error" and not stream.stream:
                # non-streaming: the engine's error answer is a whole HTTP response
                stream.resp.json(500, ERROR_OBJECT)
            elif self.kind == "error":
                stream.resp.write(ERROR_EVENT + b"data: [DONE]\n\n")
                stream.resp.end_stream()
            elif self.kind == "drop":
                stream.resp.abort()
            # "hang": leave the stream open and silent
            return None
        if self.comments:
            data = b": keep-alive\n\n" + data
        if self.crlf:
            data = data.replace(b"\n", b"\r\n")
        return data


def decide(cfg: FaultConfig, rid: int) -> tuple[bool, Style | None]:
    """(fail with HTTP 500?, stream style or None) for request ``rid``."""
    if not cfg.any:
        return False, None
    r = random.Random(cfg.seed * 1_000_003 + rid)
    if r.random() < cfg.fail_rate:
        return True, None
    x = r.random()
    kind = ""
    for name, rate in (("error", cfg.midstream_error_rate), ("drop", cfg.drop_rate),
                       ("hang", cfg.hang_rate)):
        if x < rate:
            kind = name
            break
        x -= rate
    return False, Style(kind, cfg)


def eval_stall(cfg: FaultConfig, rid: int) -> Style | None:
    """A stalled stream for an eval-mode answer (``eval_hang_rate``), else None."""
    if cfg.eval_hang_rate and random.Random(cfg.seed * 7_919 + rid).random() < cfg.eval_hang_rate:
        return Style("hang", cfg)
    return None
