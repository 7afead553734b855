"""A small coding-agent-shaped workload, replayed in-process against a ``SimServer``.

Sessions start with a unique marker; turn n+1's prompt is turn n's prompt, then that turn's
(recorded, canned) answer, then new text. A few sessions run at once, each turn after the
previous one. The theoretical hit rate is the fraction of prompt tokens in full pages that
an earlier prompt of the same session already had, with an unlimited cache.
"""

from __future__ import annotations

import asyncio
import random
import re
import time

import orjson

from infersweep.sim.metrics import metrics_text
from infersweep.sim.server import SimServer


def sessions(n_sessions: int, turns: int, seed: int = 7) -> list[list[str]]:
    rng = random.Random(seed)
    out = []
    for s in range(n_sessions):
        words = [f"[rid:{s:04x}]"]
        prompts = []
        for t in range(turns):
            words = words + [f"s{s}t{t}n{i}" for i in range(rng.randint(30, 60))]
            prompts.append(" ".join(words))
            words = words + [f"s{s}t{t}a{i}" for i in range(rng.randint(10, 20))]
        out.append(prompts)
    return out


def theoretical_hit_rate(work: list[list[str]], page: int) -> float:
    hit = total = 0
    for prompts in work:
        seen: set[tuple] = set()
        for p in prompts:
            toks = p.split()
            pages = [tuple(toks[:k + page]) for k in range(0, len(toks) - page + 1, page)]
            n = 0
            while n < len(pages) and pages[n] in seen and (n + 1) * page < len(toks):
                n += 1
            hit += n * page
            total += len(toks)
            seen.update(pages)
    return hit / total


class Conn:
    closed = False


class Resp:
    def __init__(self):
        self.conn = Conn()
        self.chunks: list[bytes] = []
        self.first_ns = 0
        self.ended = False
        self.streaming = False
        self.status = None

    def json(self, status, obj):
        self.status, self.ended = status, True

    def send(self, status, body, ctype="application/json"):
        self.status, self.ended = status, True

    def start_stream(self):
        self.streaming, self.status = True, 200

    def write(self, data):
        if not self.first_ns:
            self.first_ns = time.monotonic_ns()
        self.chunks.append(data)

    def end_stream(self):
        self.ended = True

    def abort(self):
        self.ended = True

    def usage(self) -> dict:
        events = [orjson.loads(e[6:]) for e in b"".join(self.chunks).split(b"\n\n")
                  if e.startswith(b"data: {")]
        return [e["usage"] for e in events if e.get("usage")][-1]


class Req:
    def __init__(self, prompt: str, session: str):
        self.method, self.path = "POST", "/v1/completions"
        self.headers = {"x-correlation-id": session}
        self.body = orjson.dumps({"model": "m", "prompt": prompt, "max_tokens": 6, "stream": True,
                                  "stream_options": {"include_usage": True}})
        self.arrival_ns = time.monotonic_ns()


async def replay(srv: SimServer, work: list[list[str]]) -> dict:
    """Run every session (in parallel, turns in order); mean TTFT and the usage seen."""
    ttfts: list[float] = []
    cached = 0

    async def session(i: int, prompts: list[str]) -> None:
        nonlocal cached
        for p in prompts:
            req, resp = Req(p, f"session-{i}"), Resp()
            srv.handle(req, resp)
            while not resp.ended:
                await asyncio.sleep(0.001)
            assert resp.status == 200
            ttfts.append((resp.first_ns - req.arrival_ns) / 1e6)
            cached += resp.usage()["prompt_tokens_details"]["cached_tokens"]

    # a bound, so that a broken engine fails the test instead of hanging it
    await asyncio.wait_for(asyncio.gather(*(session(i, ps) for i, ps in enumerate(work))), 30)
    return {"mean_ttft_ms": sum(ttfts) / len(ttfts), "cached_tokens": cached,
            "metrics": parse_metrics(metrics_text(srv))}


def parse_metrics(text: str) -> dict[str, float]:
    """name{labels} -> value, and name -> value summed over its label sets."""
    out: dict[str, float] = {}
    for line in text.splitlines():
        if line.startswith("#") or not line:
            continue
        m = re.fullmatch(r"([^{ ]+)(\{[^}]*\})? (\S+)", line)
        assert m, line
        name, labels, value = m.group(1), m.group(2) or "", float(m.group(3))
        out[name + labels] = value
        out[name] = out.get(name, 0.0) + value
    return out
