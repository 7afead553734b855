"""TEST DOUBLE: engine and router launch commands mapped onto the project's simulator.

srtctl starts engines with their own command lines (`vllm serve /model --port 8000 ...`,
`python3 -m sglang.launch_server --model-path /model --port 6100 --disaggregation-mode prefill
...`, `python -m sglang_router.launch_router --pd-disaggregation --prefill URL BOOT --decode URL
--port 8000`). There is no GPU engine here, so the wrappers in engine-bin/ and engine-py/ run
this script, which keeps what the simulator models (role, port, served model name, context
length, admission limit) and starts `infersweep sim serve` / the sim router in its place. Flags
the simulator has no use for (parallelism, memory fraction, ...) are accepted and ignored.

Every virtual node is this one host, and srtctl gives each node its own ports from the same
base (6100, ...), so they would collide. The srun double reports node K's address as 127.0.0.K;
a worker on node K listens on 127.0.0.1 at ``port + 1000 * (K - 1)`` (the simulator binds
127.0.0.1 only), and the router double maps ``127.0.0.K:port`` URLs the same way. Node 1's
ports, the public 8000 among them, are unchanged.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import sys
from urllib.parse import urlsplit

NODE_PORT_STRIDE = 1000


def node_number(name: str | None = None) -> int:
    m = re.search(r"(\d+)$", name or os.environ.get("SLURMD_NODENAME", "node1"))
    return int(m.group(1)) if m else 1


def local_port(node: int, port: int) -> int:
    return port + NODE_PORT_STRIDE * (node - 1)


def local_url(url: str) -> str:
    """``http://127.0.0.K:P`` (node K as srtctl sees it) → where node K's worker listens."""
    u = urlsplit(url)
    host = u.hostname or "127.0.0.1"
    node = int(host.rsplit(".", 1)[1]) if host.startswith("127.") else 1
    return f"http://127.0.0.1:{local_port(node, u.port or 80)}"


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--host")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--served-model-name", "--served_model_name")


def _sim_serve(role: str, port: int, name: str, max_len, max_seqs, batched) -> list[str]:
    cmd = ["sim", "serve", "--role", role, "--host", "127.0.0.1",
           "--port", str(local_port(node_number(), port)), "--served-model-name", name]
    if max_len:
        cmd += ["--max-model-len", str(max_len)]
    if max_seqs:
        cmd += ["--max-num-seqs", str(max_seqs)]
    if batched:
        cmd += ["--max-num-batched-tokens", str(batched)]
    return cmd + os.environ.get("INFERSWEEP_SIM_ARGS", "").split()


def vllm(argv: list[str]) -> list[str]:
    p = argparse.ArgumentParser(prog="vllm (test double)")
    p.add_argument("verb", choices=["serve"])
    p.add_argument("model")
    _common(p)
    p.add_argument("--max-model-len", "--max_model_len", type=int)
    p.add_argument("--max-num-seqs", "--max_num_seqs", type=int)
    p.add_argument("--max-num-batched-tokens", "--max_num_batched_tokens", type=int)
    a, _ignored = p.parse_known_args(argv)
    return _sim_serve("aggregated", a.port, a.served_model_name or a.model, a.max_model_len,
                      a.max_num_seqs, a.max_num_batched_tokens)


def sglang(argv: list[str]) -> list[str]:
    p = argparse.ArgumentParser(prog="sglang.launch_server (test double)")
    p.add_argument("--model-path", "--model_path", default="/model")
    _common(p)
    p.add_argument("--disaggregation-mode", "--disaggregation_mode", default="null")
    p.add_argument("--context-length", "--context_length", type=int)
    p.add_argument("--max-running-requests", "--max_running_requests", type=int)
    p.add_argument("--chunked-prefill-size", "--chunked_prefill_size", type=int)
    a, _ignored = p.parse_known_args(argv)
    role = {"prefill": "prefill", "decode": "decode"}.get(a.disaggregation_mode, "aggregated")
    return _sim_serve(role, a.port, a.served_model_name or a.model_path, a.context_length,
                      a.max_running_requests, a.chunked_prefill_size)


def sglang_router(argv: list[str]) -> None:
    """The SGLang router's P/D mode on the sim router, plus the `/workers` endpoint srtctl's
    readiness check reads (counts of healthy prefill and decode workers)."""
    p = argparse.ArgumentParser(prog="sglang_router.launch_router (test double)")
    p.add_argument("--pd-disaggregation", action="store_true")
    p.add_argument("--prefill", nargs="+", action="append", default=[])  # URL [BOOTSTRAP_PORT]
    p.add_argument("--decode", action="append", default=[])
    p.add_argument("--host")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--policy", default="round-robin")
    a, _ignored = p.parse_known_args(argv)
    if not a.pd_disaggregation or not a.prefill or not a.decode:
        sys.exit("sglang_router double: only --pd-disaggregation with --prefill and --decode")

    from infersweep.sim.httpserver import serve
    from infersweep.sim.router import Router, RouterConfig

    class SglangRouterDouble(Router):
        def handle(self, req, resp):
            if req.method == "GET" and req.path == "/workers":
                workers = [{"url": u.url, "worker_type": role, "is_healthy": u.healthy}
                           for role, group in (("prefill", self.prefill), ("decode", self.decode))
                           for u in group]
                count = {r: sum(w["is_healthy"] for w in workers if w["worker_type"] == r)
                         for r in ("prefill", "decode")}
                return resp.json(200, {"workers": workers, "total": len(workers), "stats": {
                    "prefill_count": count["prefill"], "decode_count": count["decode"],
                    "regular_count": 0}})
            return super().handle(req, resp)

    policy = "least-loaded" if a.policy in ("least-loaded", "power_of_two") else "round-robin"
    cfg = RouterConfig([local_url(pre[0]) for pre in a.prefill],
                       [local_url(u) for u in a.decode], policy)
    port = local_port(node_number(), a.port)

    async def run():
        router = SglangRouterDouble(cfg)
        srv = await serve(router.handle, "127.0.0.1", port, on_close=router.on_close)
        health = asyncio.get_running_loop().create_task(router.health_loop())
        async with srv:
            try:
                await srv.serve_forever()
            finally:
                health.cancel()

    print(f"router double: prefill {cfg.prefill} decode {cfg.decode} on 127.0.0.1:{port}",
          file=sys.stderr, flush=True)
    asyncio.run(run())


ENGINES = {"vllm": vllm, "sglang": sglang}

if __name__ == "__main__":
    engine, args = sys.argv[1], sys.argv[2:]
    if engine == "sglang_router":
        sglang_router(args)
        sys.exit(0)
    sim_args = ENGINES[engine](args)
    print(f"engine double: {engine} {' '.join(args)} -> infersweep {' '.join(sim_args)}",
          file=sys.stderr, flush=True)
    os.execv(sys.executable, [sys.executable, "-m", "infersweep", *sim_args])
