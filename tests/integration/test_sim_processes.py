"""The simulator's processes under a supervisor's signals and on a busy port (real processes,
real sockets). Table-driven like the bad-input corpora: each case gives the command, what is
done to it, the expected exit code and a message fragment; every case also asserts that no
traceback is printed and that no child process of the command is left running."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.integration.simharness import free_port

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="reads /proc to find child processes")


def _children(pid: int) -> list[int]:
    kids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[1]) == pid:
            kids.append(int(entry.name))
    return sorted(kids)


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has stopped running


def _execd(pid: int) -> bool:
    """The child runs its own command (``sim serve``), not its parent's forked image."""
    try:
        return b"serve" in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False


def _wait_for(predicate, timeout: float, what: str):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = predicate()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


@dataclass
class Case:
    id: str
    args: list[str]
    # what the test does once the command runs: "health-wait" (signal while the workers are
    # still starting: one is held stopped so the wait cannot finish), "serving" (signal once
    # the front end answers), or "busy-port" (the port is taken before the command starts)
    phase: str
    signal: int | None = None
    workers: int = 0  # child processes the command starts
    exit: int | None = None  # None: any (a SIGKILLed process has no exit code of its own)
    message: str = ""
    env: dict[str, str] = field(default_factory=dict)
    busy_offset: int = 0  # busy-port: which port is taken (0: the front end, 1: first worker)


CASES = [
    Case("cluster-sigterm-during-health-wait", ["cluster", "--topology", "2p1d"], "health-wait",
         signal.SIGTERM, workers=3, exit=128 + signal.SIGTERM),
    Case("cluster-sigint-during-health-wait", ["cluster", "--topology", "1p1d"], "health-wait",
         signal.SIGINT, workers=2, exit=128 + signal.SIGINT),
    Case("cluster-sighup-during-health-wait", ["cluster", "--topology", "1p1d"], "health-wait",
         signal.SIGHUP, workers=2, exit=128 + signal.SIGHUP),
    Case("cluster-sigkill-during-health-wait", ["cluster", "--topology", "2p1d"], "health-wait",
         signal.SIGKILL, workers=3),
    Case("cluster-sigterm-while-serving", ["cluster", "--topology", "2p1d"], "serving",
         signal.SIGTERM, workers=3, exit=0),
    Case("cluster-sigkill-while-serving", ["cluster", "--topology", "1p1d"], "serving",
         signal.SIGKILL, workers=2),
    Case("agg-cluster-sigterm-while-serving", ["cluster", "--topology", "agg"], "serving",
         signal.SIGTERM, workers=1, exit=0),
    Case("router-sigterm-while-serving",
         ["router", "--prefill", "http://127.0.0.1:9", "--decode", "http://127.0.0.1:9"],
         "serving", signal.SIGTERM, exit=0),
    Case("serve-port-in-use", ["serve"], "busy-port", exit=1,
         message="cannot listen: Address already in use"),
    Case("router-port-in-use",
         ["router", "--prefill", "http://127.0.0.1:9", "--decode", "http://127.0.0.1:9"],
         "busy-port", exit=1, message="cannot listen: Address already in use"),
    Case("cluster-front-port-in-use", ["cluster", "--topology", "2p1d"], "busy-port", exit=1,
         message="cannot listen: Address already in use"),
    Case("cluster-worker-port-in-use", ["cluster", "--topology", "2p1d"], "busy-port", exit=1,
         message="[sim-port] cannot listen: Address already in use", busy_offset=2),
]


def _front_answers(port: int) -> bool:
    """The front end accepts a connection (the router answers /health 503 without workers)."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_sim_process_case(case: Case, tmp_path):
    port = free_port(span=4)
    log = tmp_path / "stderr.txt"
    busy = None
    if case.phase == "busy-port":
        busy = socket.socket()
        busy.bind(("127.0.0.1", port + case.busy_offset))
        busy.listen()
    cmd = [sys.executable, "-m", "infersweep", "sim", *case.args, "--port", str(port)]
    with open(log, "wb") as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err,
                                env={**os.environ, **case.env})
    seen: list[int] = []
    held = None
    try:
        if case.phase == "health-wait":
            # Stop the first worker once it has exec'd (long before its interpreter has
            # started): the health wait, which checks workers in order, cannot finish now.
            # Not earlier: stopped between fork and exec, the child would hold its parent in
            # Popen (which waits for the exec) and no further worker would ever start.
            held = _wait_for(lambda: [k for k in _children(proc.pid)[:1] if _execd(k)], 30,
                             "the first worker")[0]
            os.kill(held, signal.SIGSTOP)
            seen = _wait_for(lambda: (k := _children(proc.pid)) and len(k) == case.workers and k,
                             30, f"{case.workers} workers")
            time.sleep(0.3)
            assert proc.poll() is None, log.read_text()
            assert "sim cluster" not in log.read_text(), "already past the health wait"
            os.kill(proc.pid, case.signal)
        elif case.phase == "serving":
            _wait_for(lambda: _front_answers(port), 60, "the front end")
            if case.args[0] == "cluster":  # past the health wait, not only the first worker up
                _wait_for(lambda: "sim cluster" in log.read_text(), 60, "the health wait")
            seen = _children(proc.pid)
            assert len(seen) == case.workers, seen
            os.kill(proc.pid, case.signal)
        code = proc.wait(timeout=20)
        if held is not None and case.signal == signal.SIGKILL:
            # The test's own SIGSTOP would keep that worker from acting on the SIGTERM the
            # kernel sent it when its parent died; undo it (a supervisor does not stop workers).
            os.kill(held, signal.SIGCONT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if busy is not None:
            busy.close()
    output = log.read_text()
    assert "Traceback" not in output, output
    if case.exit is not None:
        assert code == case.exit, f"exit {code}, expected {case.exit}:\n{output}"
    assert case.message in output, f"{case.message!r} not in:\n{output}"
    end = time.monotonic() + 10  # a few seconds for the children to act on SIGTERM
    while any(_alive(k) for k in seen) and time.monotonic() < end:
        time.sleep(0.05)
    left = [k for k in seen if _alive(k)]
    for k in left:  # never leave a process behind, even when the test fails
        os.kill(k, signal.SIGKILL)
    assert not left, f"child processes {left} outlived the command (of {seen}):\n{output}"
    if case.phase == "busy-port":
        assert "sim serve (" not in output or case.args[0] == "serve", "workers were started"
