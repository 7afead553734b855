"""The process that is one local job: engines up, the recipe's benchmark step, engines down.

Started by :class:`~infersweep.rowjobs.local.LocalExecutor` as ``python -m
infersweep.rowjobs.localrun JOB.json`` in a session of its own, so the job is one process group
(it, its simulators, the benchmark shell and the clients): cancelling the job signals that
group. It writes its state to ``job-status.json`` (atomically) the way a scheduler keeps
accounting, and stops every child it started on SIGTERM, SIGINT, its time limit or the death
of the process that started it.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from infersweep import lifeline
from infersweep.atomic import write_atomic

STATUS_FILE = "job-status.json"
HOST = "127.0.0.1"
# Below the kernel's ephemeral range (32768+ on Linux), so a client's outgoing socket never
# holds a port an engine is about to listen on.
PORT_RANGE = range(20000, 32000)
PORT_TRIES = 3
GRACE_S = 5.0
# how `sim router` takes a worker of each role
ROUTER_LINK = {"prefill": "--prefill", "decode": "--decode", "aggregated": "--worker"}


class Stopped(Exception):
    """A signal asked the job to stop."""


class TimeLimit(Exception):
    pass


class EngineError(Exception):
    pass


def write_status(workdir: Path, state: str, **extra) -> None:
    data = {"state": state, "pid": os.getpid(), "updated": time.time(), **extra}
    write_atomic(workdir / STATUS_FILE, json.dumps(data) + "\n")


def pick_ports(n: int) -> list[int]:
    """``n`` distinct loopback ports that are free now."""
    chosen: list[int] = []
    socks = []
    try:
        for port in random.sample(PORT_RANGE, len(PORT_RANGE)):
            s = socket.socket()
            try:
                s.bind((HOST, port))
            except OSError:
                s.close()
                continue
            socks.append(s)
            chosen.append(port)
            if len(chosen) == n:
                return chosen
    finally:
        for s in socks:
            s.close()
    raise EngineError("no free loopback ports")


def group_members() -> list[int]:
    """Live processes in this process's group other than itself (Linux /proc; else none)."""
    me, pgid, out = os.getpid(), os.getpgid(0), []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(entry.name) != me and fields[0] != "Z" and int(fields[2]) == pgid:
            out.append(int(entry.name))
    return out


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/health", timeout=2) as r:
            return r.status == 200
    except OSError:
        return False


class Job:
    def __init__(self, spec_path: Path):
        self.spec = json.loads(spec_path.read_text())
        self.workdir = spec_path.parent
        self.logs = self.workdir / "logs"
        self.logs.mkdir(parents=True, exist_ok=True)
        self.procs: list[tuple[str, subprocess.Popen]] = []

    def spawn(self, name: str, cmd: list[str], env: dict[str, str]) -> subprocess.Popen:
        log = open(self.logs / f"{name}.log", "ab")  # noqa: SIM115 - kept open for the child
        proc = lifeline.spawn(cmd, stdin=subprocess.DEVNULL, stdout=log,
                              stderr=subprocess.STDOUT, env=env, cwd=self.workdir)
        log.close()
        self.procs.append((name, proc))
        return proc

    def _wait_healthy(self, urls: list[str], deadline: float) -> None:
        pending = list(urls)
        while pending:
            for name, proc in self.procs:
                if proc.poll() is not None:
                    raise EngineError(f"{name} exited with code {proc.returncode} while "
                                      f"starting (see logs/{name}.log)")
            pending = [u for u in pending if not _healthy(u)]
            if not pending:
                return
            if time.monotonic() > deadline:
                raise EngineError(f"{', '.join(pending)} not healthy within "
                                  f"{self.spec['ready_timeout_s']:g} s")
            time.sleep(0.2)

    def start_engines(self) -> int:
        """Workers, then the router; the front-end port. Retries on a port taken meanwhile."""
        sim = [sys.executable, "-m", "infersweep", "sim"]
        env = self.spec["engine_env"]
        workers = self.spec["workers"]
        for attempt in range(1, PORT_TRIES + 1):
            ports = pick_ports(len(workers) + (1 if self.spec["router"] is not None else 0))
            try:
                urls, per_role = [], {}
                for w, port in zip(workers, ports, strict=False):
                    k = per_role[w["role"]] = per_role.get(w["role"], -1) + 1
                    self.spawn(f"{w['role']}-{k}", [*sim, "serve", "--host", HOST, "--port",
                                                    str(port), *w["args"]], env)
                    urls.append(f"http://{HOST}:{port}")
                deadline = time.monotonic() + self.spec["ready_timeout_s"]
                self._wait_healthy(urls, deadline)
                if self.spec["router"] is None:
                    return ports[0]
                front = ports[-1]
                links = []
                for w, url in zip(workers, urls, strict=False):
                    links += [ROUTER_LINK[w["role"]], url]
                self.spawn("router", [*sim, "router", "--host", HOST, "--port", str(front),
                                      *links, *self.spec["router"]["args"]], env)
                self._wait_healthy([f"http://{HOST}:{front}"], deadline)
                return front
            except EngineError:
                self.stop_children()
                if attempt == PORT_TRIES:
                    raise
        raise AssertionError("unreachable")

    def run_benchmark(self, port: int) -> int:
        env = dict(self.spec["bench_env"], SRT_FRONTEND_HOST=HOST, SRT_FRONTEND_PORT=str(port))
        proc = self.spawn("benchmark", ["bash", "-c", self.spec["command"]], env)
        limit = self.spec.get("time_limit_s")
        end = None if limit is None else self.started + limit
        while proc.poll() is None:
            if end is not None and time.monotonic() > end:
                raise TimeLimit()
            time.sleep(0.2)
        return proc.returncode

    def stop_children(self, *, group: bool = False) -> None:
        """SIGTERM, a grace period, SIGKILL: for the children, and with ``group`` (this job's
        end, its own signals ignored by then) for every process left in its process group,
        such as a client whose benchmark shell is already gone."""
        alive = [p for _, p in self.procs if p.poll() is None]
        for p in alive:
            p.terminate()
        own_group = group and os.getpgid(0) == os.getpid()
        if own_group:
            with contextlib.suppress(OSError):
                os.killpg(os.getpid(), signal.SIGTERM)
        end = time.monotonic() + GRACE_S
        for p in alive:
            try:
                p.wait(timeout=max(0.1, end - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self.procs.clear()
        if own_group:
            while group_members() and time.monotonic() < end:
                time.sleep(0.1)
            for pid in group_members():
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)

    def run(self) -> int:
        self.started = time.monotonic()
        write_status(self.workdir, "RUNNING", phase="starting engines")
        state, reason, code = "FAILED", None, 1
        try:
            port = self.start_engines()
            write_status(self.workdir, "RUNNING", phase="benchmark", frontend_port=port)
            rc = self.run_benchmark(port)
            if rc == 0:
                state, code = "COMPLETED", 0
            else:
                reason = f"the benchmark step exited {rc} (see logs/benchmark.log)"
        except Stopped as exc:
            state, reason, code = "CANCELLED", f"received {exc}", 128 + 15
        except TimeLimit:
            state, code = "TIMEOUT", 1
            reason = f"time limit of {self.spec['time_limit_s']:g} s reached"
        except EngineError as exc:
            reason = f"engines did not start: {exc}"
        finally:
            for sig in (signal.SIGTERM, signal.SIGINT):
                signal.signal(sig, signal.SIG_IGN)
            self.stop_children(group=True)
        write_status(self.workdir, state, reason=reason)
        return code


def main(argv: list[str]) -> int:

    def stop(signum, frame):
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, signal.SIG_IGN)
        raise Stopped(signal.Signals(signum).name)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        job = Job(Path(argv[0]))
        return job.run()
    except Stopped:
        return 128 + 15


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
