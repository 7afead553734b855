"""``sim cluster``: a whole topology on one machine (workers as processes, router in front)."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import subprocess
import sys
import time
import urllib.request

from infersweep.diagnostics import InputError
from infersweep.sim.router import RouterConfig, run_router

TOPOLOGIES = {"agg": (0, 0), "1p1d": (1, 1), "2p1d": (2, 1)}


def plan_ports(topology: str, port: int) -> dict[str, list[int]]:
    if topology not in TOPOLOGIES:
        raise InputError(f"unknown topology {topology!r} (agg, 1p1d, 2p1d)")
    n_p, n_d = TOPOLOGIES[topology]
    if topology == "agg":
        return {"aggregated": [port]}
    return {"prefill": [port + 1 + k for k in range(n_p)],
            "decode": [port + 1 + n_p + k for k in range(n_d)]}


def _wait_health(url: str, timeout: float, procs) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for p in procs:
            if p.poll() is not None:
                raise InputError(f"a simulator worker exited early (code {p.returncode})")
        try:
            with urllib.request.urlopen(url + "/health", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.2)
    raise InputError(f"{url} did not become healthy within {timeout:g}s")


def run_cluster(topology: str, host: str, port: int, serve_args: dict[str, list[str]],
                router_cfg: RouterConfig) -> None:
    """Start the workers (each ``serve_args[role]`` is its extra CLI flags), then the router."""
    layout = plan_ports(topology, port)
    procs = []

    def spawn(role: str, p: int):
        cmd = [sys.executable, "-m", "infersweep", "sim", "serve", "--role", role,
               "--host", host, "--port", str(p), *serve_args.get(role, [])]
        procs.append(subprocess.Popen(cmd))

    try:
        for role, ports in layout.items():
            for p in ports:
                spawn(role, p)
        for ports in layout.values():
            for p in ports:
                _wait_health(f"http://{host}:{p}", 60, procs)
        desc = ", ".join(f"{len(v)} {k} on {v}" for k, v in layout.items())
        print(f"sim cluster {topology}: {desc}", file=sys.stderr, flush=True)
        if topology == "agg":
            print(f"ready: http://{host}:{port}", file=sys.stderr, flush=True)
            _wait_children(procs)
            return
        router_cfg.prefill = [f"http://{host}:{p}" for p in layout["prefill"]]
        router_cfg.decode = [f"http://{host}:{p}" for p in layout["decode"]]
        print(f"router on http://{host}:{port}", file=sys.stderr, flush=True)
        _run_loop(run_router(router_cfg, host, port))
    finally:
        for p in procs:
            if p.poll() is None:
                p.terminate()
        for p in procs:
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()


def _wait_children(procs) -> None:
    stop = {"flag": False}

    def handler(signum, frame):
        stop["flag"] = True

    signal.signal(signal.SIGTERM, handler)
    with contextlib.suppress(KeyboardInterrupt):
        while not stop["flag"] and all(p.poll() is None for p in procs):
            time.sleep(0.2)


def _run_loop(coro) -> None:
    try:
        import uvloop

        uvloop.install()
    except ImportError:  # pragma: no cover
        pass
    loop = asyncio.new_event_loop()
    task = loop.create_task(coro)
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, task.cancel)
    with contextlib.suppress(asyncio.CancelledError, KeyboardInterrupt):
        loop.run_until_complete(task)
    loop.close()
