"""``sim serve``: an OpenAI-compatible engine simulator (one role of a topology)."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from dataclasses import dataclass, field

import orjson

from infersweep.sim import faults
from infersweep.sim.httpserver import Request, Responder, serve
from infersweep.sim.kvcache import page_hashes
from infersweep.sim.metrics import metrics_text
from infersweep.sim.model import Engine, Fixed, ModelParams
from infersweep.sim.sessionroute import HashRing, session_key
from infersweep.sim.stream import SimStream


@dataclass
class SimConfig:
    role: str = "aggregated"          # aggregated | prefill | decode
    served_model_names: list[str] = field(default_factory=lambda: ["infersweep-sim"])
    max_model_len: int = 16384
    model: ModelParams = field(default_factory=ModelParams)
    dp_size: int = 1  # data-parallel ranks: schedulers, each with the model's limits
    dp_routing: str = "least-loaded"  # or "session": consistent hash of the session key
    faults: faults.FaultConfig = field(default_factory=faults.FaultConfig)
    keep_truth: bool = True
    answer_key: object | None = None  # evalmode.AnswerKey


def _err(resp: Responder, status: int, message: str, etype: str = "BadRequestError") -> None:
    resp.json(status, {"object": "error", "message": message, "type": etype, "param": None,
                       "code": status})


def count_tokens(text: str) -> int:
    """The simulator's tokenizer: one token per whitespace-separated word."""
    return len(text.split())


def prompt_of(body: dict, chat: bool) -> tuple[str | None, int]:
    """(prompt text or None for token ids, prompt token count)."""
    if chat:
        msgs = body.get("messages")
        if not isinstance(msgs, list) or not msgs:
            raise ValueError("'messages' must be a non-empty list")
        parts = []
        for m in msgs:
            c = m.get("content") if isinstance(m, dict) else None
            if isinstance(c, list):
                c = " ".join(p.get("text", "") for p in c if isinstance(p, dict))
            if c:
                parts.append(str(c))
        text = "\n".join(parts)
        return text, count_tokens(text)
    p = body.get("prompt")
    if isinstance(p, list) and p and isinstance(p[0], (list, str)):
        if len(p) > 1:  # a batch: answering only its first prompt would lose the rest silently
            raise ValueError(f"'prompt' is a list of {len(p)} prompts; the simulator answers "
                             "one prompt per request (send them as separate requests)")
        p = p[0]
    if isinstance(p, str):
        return p, count_tokens(p)
    if isinstance(p, list) and all(isinstance(x, int) for x in p):
        return None, len(p)
    raise ValueError("'prompt' must be a string or a list of token ids")


def prompt_token_list(body: dict, text: str | None) -> list:
    """The prompt as the simulator's tokens: words of the text, or the token ids sent."""
    if text is not None:
        return text.split()
    p = body["prompt"]
    return p[0] if isinstance(p[0], list) else p


def stop_strings(stop) -> list[str]:
    """The request's ``stop`` field as a list (OpenAI: a string, a list of strings, or null)."""
    if stop is None:
        return []
    if isinstance(stop, str):
        return [stop] if stop else []
    if isinstance(stop, list) and all(isinstance(x, str) for x in stop):
        return [x for x in stop if x]
    raise ValueError("'stop' must be a string or a list of strings")


def cut_at_stop(words: list[str], stop: list[str]) -> list[str]:
    """The answer words before the first stop string (the stop string itself is not sent,
    as OpenAI-compatible engines do)."""
    text = " ".join(words)
    cut = min((i for i in (text.find(s) for s in stop) if i >= 0), default=-1)
    if cut < 0:
        return words
    return text[:cut].rstrip().split(" ") if text[:cut].strip() else [""]


class SimServer:
    def __init__(self, cfg: SimConfig):
        self.cfg = cfg
        self.ids = itertools.count()
        p = cfg.model
        kind = Fixed if p.fixed_itl_ms is not None else Engine
        self.ranks = [kind(p) for _ in range(max(1, cfg.dp_size))]
        self._rank_turn = 0
        self.ring = HashRing(len(self.ranks)) if cfg.dp_routing == "session" else None
        self.truth: list[dict] = []
        self.streams_by_conn: dict = {}
        self.counters = {"requests": 0, "success": 0, "rejected": 0, "failed": 0,
                         "prompt_tokens": 0, "generation_tokens": 0}
        self.inflight = 0
        self.peak_inflight = 0

    @property
    def engine(self):
        """The first rank's model (the only one without DP ranks)."""
        return self.ranks[0]

    # --- HTTP entry -------------------------------------------------------------------
    def handle(self, req: Request, resp: Responder):
        path, method = req.path, req.method
        if path in ("/v1/completions", "/v1/chat/completions"):
            if method != "POST":
                return _err(resp, 405, "use POST", "MethodNotAllowed")
            return self.generate(req, resp, chat=path.endswith("chat/completions"))
        if method == "GET" and path in ("/health", "/ready"):
            return resp.send(200, b"")
        if method == "GET" and path == "/v1/models":
            data = [{"id": n, "object": "model", "owned_by": "infersweep-sim",
                     "max_model_len": self.cfg.max_model_len} for n in self.cfg.served_model_names]
            return resp.json(200, {"object": "list", "data": data})
        if method == "GET" and path == "/metrics":
            return resp.send(200, metrics_text(self).encode(), "text/plain; version=0.0.4")
        if method == "GET" and path == "/debug/timings":
            return resp.send(200, b"".join(orjson.dumps(t) + b"\n" for t in self.truth),
                             "application/x-ndjson")
        if method == "GET" and path == "/debug/stats":
            return resp.json(200, self.stats())
        if method == "POST" and path == "/debug/reset":
            self.truth.clear()
            self.peak_inflight = self.inflight
            return resp.json(200, {"ok": True})
        return _err(resp, 404, f"no route {method} {path}", "NotFoundError")

    def generate(self, req: Request, resp: Responder, chat: bool):
        self.counters["requests"] += 1
        try:
            body = orjson.loads(req.body)
            if not isinstance(body, dict):
                raise ValueError("request body must be a JSON object")
            model = body.get("model")
            if model not in self.cfg.served_model_names:
                self.counters["rejected"] += 1
                return _err(resp, 404, f"The model `{model}` does not exist.", "NotFoundError")
            text, n_prompt = prompt_of(body, chat)
        except (ValueError, orjson.JSONDecodeError) as exc:
            self.counters["rejected"] += 1
            return _err(resp, 400, str(exc))
        if n_prompt == 0:
            self.counters["rejected"] += 1
            return _err(resp, 400, "the prompt is empty")
        # max_completion_tokens wins over max_tokens (as the engines do)
        mt = body.get("max_completion_tokens")
        if mt is None:
            mt = body.get("max_tokens")
        limit = self.cfg.max_model_len
        if mt is None:
            mt = max(0, limit - n_prompt)
        if not isinstance(mt, int) or mt < 1:
            self.counters["rejected"] += 1
            return _err(resp, 400, f"max_tokens must be a positive integer (got {mt!r})")
        if n_prompt + mt > limit:
            self.counters["rejected"] += 1
            return _err(resp, 400,
                        f"This model's maximum context length is {limit} tokens. However, you "
                        f"requested {n_prompt + mt} tokens ({n_prompt} in the messages, {mt} in "
                        "the completion). Please reduce the length of the messages or completion.")
        rid = next(self.ids)
        fail, style = faults.decide(self.cfg.faults, rid)
        if fail:
            self.counters["failed"] += 1
            return _err(resp, 500, "simulated engine failure", "InternalServerError")
        try:
            stop = stop_strings(body.get("stop"))
        except ValueError as exc:
            self.counters["rejected"] += 1
            return _err(resp, 400, str(exc))
        words = None
        if self.cfg.answer_key is not None and text is not None:
            words = self.cfg.answer_key.respond(text)
            if words is not None and stop:
                words = cut_at_stop(words, stop)
            if words is not None and self.cfg.role != "prefill":
                style = faults.eval_stall(self.cfg.faults, rid) or style
        if self.cfg.role == "prefill":
            mt = 1
        stream = bool(body.get("stream", False))
        opts = body.get("stream_options") or {}
        s = SimStream(rid, resp, model=model, chat=chat, prompt_tokens=n_prompt, max_tokens=mt,
                      arrival_ns=req.arrival_ns,
                      include_usage=bool(opts.get("include_usage")) and not self.cfg.faults.omit_usage,
                      continuous_usage=bool(opts.get("continuous_usage_stats"))
                      and not self.cfg.faults.omit_usage,
                      stream=stream, words=words, style=style)
        kv = self.cfg.model.kv
        if kv.prefix_caching:  # (the fixed pacer has no KV model: the CLI refuses both)
            s.page_hashes = page_hashes(prompt_token_list(body, text), kv.page_size)
            s.report_cached = True
        if stream:
            resp.start_stream()
        self.counters["prompt_tokens"] += n_prompt
        self.inflight += 1
        self.peak_inflight = max(self.peak_inflight, self.inflight)
        self.streams_by_conn[resp.conn] = s
        prefilled = self.cfg.role == "decode" and bool(
            (body.get("kv_transfer_params") or {}).get("do_remote_prefill"))
        s.on_done = self._done
        self.pick_rank(req.headers).submit(s, prefilled=prefilled)

    def pick_rank(self, headers: dict[str, str] | None = None):
        """With session routing, the rank the session key hashes to; otherwise (or for a
        request without a key) the rank with the fewest requests (queued or admitted),
        ties taken in turn, so equal ranks fill round-robin, as the engines' DP balancers do."""
        if self.ring is not None and headers:
            key = session_key(headers)
            if key is not None:
                return self.ranks[self.ring.target(key)]
        n = len(self.ranks)
        start = self._rank_turn
        self._rank_turn = (start + 1) % n
        order = [self.ranks[(start + k) % n] for k in range(n)]
        return min(order, key=lambda e: len(e.waiting) + e.admitted)

    def _done(self, s: SimStream) -> None:
        self.inflight -= 1
        self.streams_by_conn.pop(s.resp.conn, None)
        self.counters["generation_tokens"] += s.sent
        self.counters["success"] += 1
        if self.cfg.keep_truth:
            self.truth.append(s.truth())

    def on_close(self, conn) -> None:
        s = self.streams_by_conn.pop(conn, None)
        if s is not None and not s.done:
            s.done = True  # client went away: free the slot, as engines abort the request
            self.inflight -= 1

    # --- observability ----------------------------------------------------------------
    def stats(self) -> dict:
        rs = self.ranks
        return {"role": self.cfg.role, **self.counters, "inflight": self.inflight,
                "peak_inflight": self.peak_inflight,
                "running": sum(len(e.running) for e in rs),
                "waiting": sum(len(e.waiting) + len(e.prefilling) for e in rs),
                "steps": sum(e.steps for e in rs),
                "lag_ms_max": max(e.lag_ns_max for e in rs) / 1e6, "dp_size": len(rs),
                "ranks": [_rank_stats(e) for e in rs], "kv": self.kv_stats()}

    def kv_stats(self) -> dict | None:
        """The KV model's counters summed over ranks (None without a KV model)."""
        pools = [e.kv for e in self.ranks if getattr(e, "kv", None) is not None]
        if not pools:
            return None
        out = {k: sum(getattr(kp, k) for kp in pools) for k in KV_COUNTERS}
        out["preemptions"] = sum(e.preemptions for e in self.ranks)
        cap = [kp.capacity for kp in pools]
        page = pools[0].page
        out["prefix_caching"] = pools[0].caching
        out["page_size"] = page
        out["pool_tokens"] = None if None in cap else sum(cap) * page
        out["used_tokens"] = sum(kp.used_pages for kp in pools) * page
        out["usage"] = (sum(min(kp.used_pages, kp.capacity) for kp in pools) / sum(cap)
                        if out["pool_tokens"] else 0.0)
        out["cpu_pool_tokens"] = sum(kp.cpu_capacity for kp in pools) * page
        out["cpu_used_tokens"] = sum(kp.cpu_used_pages for kp in pools) * page
        return out


KV_COUNTERS = ("queries", "hits", "external_queries", "external_hits", "computed",
               "pages_offloaded", "pages_loaded")


def _rank_stats(e) -> dict:
    out = {"admitted": e.admitted, "queued": len(e.waiting)}
    kv = getattr(e, "kv", None)
    if kv is not None:
        out.update(kv_usage=kv.usage, kv_hits=kv.hits, kv_queries=kv.queries,
                   preemptions=e.preemptions)
    return out


async def run_server(cfg: SimConfig, host: str, port: int, ready: asyncio.Event | None = None,
                     ssl_context=None):
    app = SimServer(cfg)
    srv = await serve(app.handle, host, port, on_close=app.on_close, ssl_context=ssl_context)
    if ready is not None:
        ready.set()
    try:
        async with srv:
            await srv.serve_forever()
    finally:  # stop the ranks' step loops too, so shutdown is quiet and complete
        for engine in app.ranks:
            task = getattr(engine, "task", None)
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
