"""``sim cluster``: a whole topology on one machine (workers as processes, router in front)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import time
import urllib.request

from infersweep.diagnostics import Diagnostic, InputError
from infersweep.lifeline import SERVER_STOP_SIGNALS, signals_exit, spawn, stop_all
from infersweep.sim.router import RouterConfig, run_router

TOPOLOGIES = {"agg": (0, 0), "1p1d": (1, 1), "2p1d": (2, 1)}
MAX_PORT = 65535
STOP_CODES = {128 + s for s in SERVER_STOP_SIGNALS}


def plan_ports(topology: str, port: int) -> dict[str, list[int]]:
    """The front end listens on ``port``, the workers of a disaggregated topology on the next
    ports; every one of them must be a real TCP port (1..65535)."""
    if topology not in TOPOLOGIES:
        raise InputError(f"unknown topology {topology!r} (agg, 1p1d, 2p1d)")
    n_p, n_d = TOPOLOGIES[topology]
    last = port + n_p + n_d
    if port < 1 or last > MAX_PORT:
        raise InputError(Diagnostic(
            "--port", 0, 0, f"{topology} needs ports {port}..{last}, outside 1..{MAX_PORT}",
            f"use a --port between 1 and {MAX_PORT - n_p - n_d}", "sim-port"))
    if topology == "agg":
        return {"aggregated": [port]}
    return {"prefill": [port + 1 + k for k in range(n_p)],
            "decode": [port + 1 + n_p + k for k in range(n_d)]}


def listen_error(host: str, port: int, exc: OSError) -> InputError:
    """The message for a port the simulator cannot listen on (in use, privileged...)."""
    hint = ("another process is listening there; stop it or pick another --port"
            if exc.errno in (98, 48) else "pick another --port")  # EADDRINUSE: Linux, macOS
    reason = os.strerror(exc.errno) if exc.errno else str(exc)  # not asyncio's long wording
    return InputError(Diagnostic(f"{host}:{port}", 0, 0, f"cannot listen: {reason}", hint,
                                 "sim-port"))


def check_can_listen(host: str, port: int) -> None:
    """Fail at once, before any worker starts, when ``port`` is taken (the router binds it
    only after the workers are healthy)."""
    import socket

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            raise listen_error(host, port, exc) from None


def _wait_health(url: str, timeout: float, procs, ports: dict) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for p in procs:
            if p.poll() is not None:
                raise InputError(Diagnostic(
                    f"port {ports.get(p.pid, '?')}", 0, 0,
                    f"a simulator worker exited early (code {p.returncode})",
                    "its own message is printed above", "sim-worker"))
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
    for ports in [[port], *layout.values()]:
        for p in ports:
            check_can_listen(host, p)
    procs = []
    by_pid: dict[int, int] = {}

    def start(role: str, p: int):
        cmd = [sys.executable, "-m", "infersweep", "sim", "serve", "--role", role,
               "--host", host, "--port", str(p), *serve_args.get(role, [])]
        proc = spawn(cmd)
        procs.append(proc)
        by_pid[proc.pid] = p

    # A stop signal at any moment (even mid-health-wait) unwinds through `finally`, and each
    # worker also dies with this process if it is killed outright (see infersweep/lifeline.py).
    with signals_exit():
        try:
            for role, ports in layout.items():
                for p in ports:
                    start(role, p)
            for ports in layout.values():
                for p in ports:
                    _wait_health(f"http://{host}:{p}", 60, procs, by_pid)
            _serve_front(topology, host, port, layout, procs, router_cfg)
        finally:
            stop_all(procs)


def _serve_front(topology, host, port, layout, procs, router_cfg) -> None:
    desc = ", ".join(f"{len(v)} {k} on {v}" for k, v in layout.items())
    print(f"sim cluster {topology}: {desc}", file=sys.stderr, flush=True)
    if topology == "agg":
        print(f"ready: http://{host}:{port}", file=sys.stderr, flush=True)
        try:
            while all(p.poll() is None for p in procs):  # until a worker exits or a signal
                time.sleep(0.2)
        except SystemExit as exc:
            if exc.code not in STOP_CODES:
                raise
        return  # a stop signal while serving is the normal way to end, as for the router
    router_cfg.prefill = [f"http://{host}:{p}" for p in layout["prefill"]]
    router_cfg.decode = [f"http://{host}:{p}" for p in layout["decode"]]
    print(f"router on http://{host}:{port}", file=sys.stderr, flush=True)
    try:
        _run_loop(run_router(router_cfg, host, port))
    except OSError as exc:
        raise listen_error(host, port, exc) from None


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
    try:
        with contextlib.suppress(asyncio.CancelledError, KeyboardInterrupt):
            loop.run_until_complete(task)
    finally:
        try:
            _finish_tasks(loop)
        finally:
            loop.close()


STOP_GRACE_S = 5.0  # how long the handlers of open connections get to unwind


def _finish_tasks(loop: asyncio.AbstractEventLoop) -> None:
    """Cancel what is still running (the handlers of open connections) and let it unwind, as
    :func:`asyncio.run` does: a loop closed over pending tasks prints "Task was destroyed but
    it is pending!" for each of them on the way out."""
    pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
    for t in pending:
        t.cancel()
    if pending:
        with contextlib.suppress(asyncio.CancelledError, KeyboardInterrupt):
            loop.run_until_complete(asyncio.wait(pending, timeout=STOP_GRACE_S))
    with contextlib.suppress(Exception, KeyboardInterrupt):
        loop.run_until_complete(loop.shutdown_asyncgens())
