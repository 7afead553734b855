"""``sim router``: a front end over disaggregated or aggregated workers.

Disaggregated, each request is first sent to a prefill worker with one output token (as
disaggregation proxies do), then waits a modelled KV-transfer delay, then streams from a
decode worker with ``kv_transfer_params.do_remote_prefill`` so the decode worker skips the
prompt. Aggregated (``workers``), each request streams from one worker as it is.
``/health`` answers 200 only while every expected worker answers its own ``/health``.
With the ``consistent-hash`` policy a request's session header picks its worker on a hash
ring (every turn of a session reaches the same worker's prefix cache); session headers are
passed on to the workers, whose own DP ranks may route on them too.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import orjson

from infersweep.bench.httpconn import HTTPError, Pool, Sink, build_head
from infersweep.sim.httpserver import Request, Responder, serve
from infersweep.sim.sessionroute import SESSION_HEADERS, HashRing, session_key

_now = time.monotonic_ns


@dataclass
class RouterConfig:
    prefill: list[str] = field(default_factory=list)
    decode: list[str] = field(default_factory=list)
    policy: str = "round-robin"       # or least-loaded, consistent-hash
    kv_base_ms: float = 2.0
    kv_bytes_per_token: int = 70_000  # ~ an fp8 KV cache of a large MoE model
    kv_gbps: float = 50.0             # effective transfer bandwidth, GB/s
    health_interval: float = 0.5
    workers: list[str] = field(default_factory=list)  # aggregated workers (no prefill/decode)


class Upstream:
    def __init__(self, url: str):
        u = urlsplit(url)
        self.url = url
        self.host, self.port = u.hostname, u.port or 80
        self.pool = Pool(self.host, self.port, connect_timeout=5)
        self.inflight = 0
        self.healthy = False


class Collect(Sink):
    def __init__(self):
        self.status = 0
        self.body = b""

    def on_headers(self, status, headers, t):
        self.status = status

    def on_body(self, data, t):
        self.body += data


class Relay(Sink):
    """Forwards a decode worker's stream to the client as bytes arrive."""

    def __init__(self, resp: Responder, truth: list[int]):
        self.resp = resp
        self.status = 0
        self.err = b""
        self.truth = truth

    def on_headers(self, status, headers, t):
        self.status = status
        if status == 200 and headers.get("content-type", "").startswith("text/event-stream"):
            self.resp.start_stream()

    def on_body(self, data, t):
        if self.resp.streaming:
            self.truth.append(_now())
            self.resp.write(data)
        else:
            self.err += data


class Router:
    def __init__(self, cfg: RouterConfig):
        self.cfg = cfg
        self.prefill = [Upstream(u) for u in cfg.prefill]
        self.decode = [Upstream(u) for u in cfg.decode]
        self.workers = [Upstream(u) for u in cfg.workers]
        self.upstreams = self.prefill + self.decode + self.workers
        self._rr = {"p": itertools.count(), "d": itertools.count(), "w": itertools.count()}
        self._rings: dict[int, HashRing] = {}
        self.truth: list[dict] = []
        self.ids = itertools.count()
        self.stats = {"requests": 0, "errors": 0}

    def pick(self, group: list[Upstream], key: str, headers: dict | None = None) -> Upstream:
        if self.cfg.policy == "least-loaded":
            return min(group, key=lambda u: u.inflight)
        if self.cfg.policy == "consistent-hash" and headers:
            session = session_key(headers)
            if session is not None:
                ring = self._rings.get(len(group))
                if ring is None:
                    ring = self._rings[len(group)] = HashRing(len(group))
                return group[ring.target(session)]
        return group[next(self._rr[key]) % len(group)]

    @property
    def ready(self) -> bool:
        return all(u.healthy for u in self.upstreams)

    async def health_loop(self) -> None:
        while True:
            await asyncio.gather(*(self._check(u) for u in self.upstreams))
            await asyncio.sleep(self.cfg.health_interval)

    async def _check(self, u: Upstream) -> None:
        try:
            status, _ = await self._call(u, "GET", "/health", b"", timeout=2)
            u.healthy = status == 200
        except (HTTPError, TimeoutError):
            u.healthy = False

    async def _call(self, u: Upstream, method: str, path: str, body: bytes, timeout=None,
                    extra: dict | None = None):
        sink = Collect()
        conn = await u.pool.acquire()
        fut = conn.request(build_head(method, u.host, u.port, path, len(body), extra), body, sink)
        try:
            await (asyncio.wait_for(fut, timeout) if timeout else fut)
        except TimeoutError:
            conn.abort("timeout", "upstream timeout")
            raise
        u.pool.release(conn)
        return sink.status, sink.body

    def handle(self, req: Request, resp: Responder):
        if req.method == "GET" and req.path in ("/health", "/ready"):
            if self.ready:
                return resp.send(200, b"")
            down = [u.url for u in self.upstreams if not u.healthy]
            return resp.json(503, {"object": "error", "message": f"workers not ready: {down}",
                                   "code": 503})
        if req.method == "GET" and req.path == "/v1/models":
            return self._proxy_get(req, resp)
        if req.method == "GET" and req.path == "/metrics":
            text = "".join(
                f'# TYPE infersweep_router_inflight gauge\ninfersweep_router_inflight{{worker="{u.url}",'
                f'role="{role}"}} {u.inflight}\n'
                for role, grp in (("prefill", self.prefill), ("decode", self.decode),
                                  ("aggregated", self.workers)) for u in grp)
            return resp.send(200, text.encode(), "text/plain; version=0.0.4")
        if req.method == "GET" and req.path == "/debug/timings":
            return resp.send(200, b"".join(orjson.dumps(t) + b"\n" for t in self.truth),
                             "application/x-ndjson")
        if req.method == "POST" and req.path == "/debug/reset":
            self.truth.clear()
            return resp.json(200, {"ok": True})
        if req.method == "POST" and req.path in ("/v1/completions", "/v1/chat/completions"):
            return self.generate(req, resp)
        return resp.json(404, {"object": "error", "message": f"no route {req.method} {req.path}",
                               "code": 404})

    async def _proxy_get(self, req: Request, resp: Responder) -> None:
        try:
            status, body = await self._call((self.decode or self.workers)[0], "GET", req.path,
                                            b"", timeout=5)
        except (HTTPError, TimeoutError) as exc:
            return resp.json(503, {"object": "error", "message": f"worker: {exc}", "code": 503})
        resp.send(status, body)

    async def generate(self, req: Request, resp: Responder) -> None:
        self.stats["requests"] += 1
        passed = {k: v for k, v in req.headers.items() if k in SESSION_HEADERS}
        if self.workers:
            w = self.pick(self.workers, "w", req.headers)
            arrival, sends = req.arrival_ns, []
            if await self._stream(w, req.path, req.body, resp, sends, "worker", passed):
                self.truth.append({"rid": next(self.ids), "arrival_ns": arrival,
                                   "send_ns": sends, "worker": w.url})
            return
        try:
            body = orjson.loads(req.body)
            if not isinstance(body, dict):
                raise ValueError
        except (ValueError, orjson.JSONDecodeError):
            return resp.json(400, {"object": "error", "message": "body is not a JSON object",
                                   "code": 400})
        rid = next(self.ids)
        # 1. prefill: one token, not streamed
        pre = dict(body, max_tokens=1, stream=False)
        pre.pop("stream_options", None)
        if "max_completion_tokens" in pre:
            pre["max_completion_tokens"] = 1
        p = self.pick(self.prefill, "p", req.headers)
        p.inflight += 1
        try:
            status, pbody = await self._call(p, "POST", req.path, orjson.dumps(pre), extra=passed)
        except HTTPError as exc:
            self.stats["errors"] += 1
            return resp.json(502, {"object": "error", "code": 502,
                                   "message": f"prefill worker {p.url}: {exc}"})
        finally:
            p.inflight -= 1
        if status != 200:
            self.stats["errors"] += 1
            return resp.send(status, pbody)
        ptoks = (orjson.loads(pbody).get("usage") or {}).get("prompt_tokens", 0)
        # 2. KV transfer
        delay = self.cfg.kv_base_ms / 1e3 + ptoks * self.cfg.kv_bytes_per_token / (self.cfg.kv_gbps * 1e9)
        await asyncio.sleep(delay)
        # 3. decode, streamed back as it arrives
        dec = dict(body, kv_transfer_params={"do_remote_prefill": True, "remote_prefill_worker": p.url})
        d = self.pick(self.decode, "d", req.headers)
        sends: list[int] = []
        arrival = req.arrival_ns
        if await self._stream(d, req.path, orjson.dumps(dec), resp, sends, "decode worker",
                              passed):
            self.truth.append({"rid": rid, "arrival_ns": arrival, "send_ns": sends,
                               "prompt_tokens": ptoks, "prefill": p.url, "decode": d.url})

    async def _stream(self, u: Upstream, path: str, data: bytes, resp: Responder,
                      sends: list[int], what: str, extra: dict | None = None) -> bool:
        """Relay one request's answer from ``u`` to the client as it arrives; False when the
        upstream failed (the client got a 502 or a cut stream)."""
        u.inflight += 1
        relay = Relay(resp, sends)
        try:
            conn = await u.pool.acquire()
            fut = conn.request(build_head("POST", u.host, u.port, path, len(data), extra), data,
                               relay)
            resp.conn.peer = conn  # let a client disconnect abort the upstream stream
            await fut
            u.pool.release(conn)
        except HTTPError as exc:
            self.stats["errors"] += 1
            if resp.streaming:
                resp.abort()
            else:
                resp.json(502, {"object": "error", "code": 502, "message": f"{what} {u.url}: {exc}"})
            return False
        finally:
            u.inflight -= 1
            resp.conn.peer = None
        if resp.streaming:
            resp.end_stream()
        else:
            resp.send(relay.status, relay.err)
        return True

    def on_close(self, conn) -> None:
        peer = getattr(conn, "peer", None)
        if peer is not None and not peer.closed:
            peer.abort("disconnect", "client went away")


async def run_router(cfg: RouterConfig, host: str, port: int) -> None:
    router = Router(cfg)
    srv = await serve(router.handle, host, port, on_close=router.on_close)
    health = asyncio.get_running_loop().create_task(router.health_loop())
    async with srv:
        try:
            await srv.serve_forever()
        finally:
            health.cancel()
