"""Ctrl-C on `sim cluster` with requests in flight stops it quietly: a terminal sends SIGINT
to the whole foreground process group (the command and every worker), and no process may
print asyncio's "Task was destroyed but it is pending!" for the connections it was serving.

Real processes and sockets: the command runs in its own session, streaming requests are held
open through the front end, then the group gets SIGINT as a terminal would send it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request

import pytest

from tests.integration.simharness import free_port

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="process groups and signals as on Linux")

STREAMS = 12  # connections open when Ctrl-C arrives


def _stream(port: int, started: threading.Event) -> None:
    body = json.dumps({"model": "infersweep-sim", "prompt": "hello", "max_tokens": 4000,
                       "stream": True}).encode()
    req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/completions", data=body,
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            started.set()
            for _ in resp:
                pass
    except OSError:
        pass  # the server went away: expected


def _wait_ready(port: int, proc, timeout: float = 60) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        assert proc.poll() is None, "the cluster exited before it was ready"
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.2)
    raise AssertionError("the cluster did not become healthy")


@pytest.mark.parametrize("topology,to_group", [("agg", True), ("1p1d", True), ("1p1d", False),
                                               ("2p1d", False)])
def test_ctrl_c_with_streams_in_flight_is_quiet(topology, to_group, tmp_path):
    """``to_group``: a terminal's Ctrl-C (every process at once); otherwise SIGINT to the
    command alone (a supervisor), so the front end stops while its workers still stream."""
    port = free_port(span=4)
    log = tmp_path / "output.txt"
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "infersweep", "sim", "cluster",
                                 "--topology", topology, "--port", str(port)],
                                stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        _wait_ready(port, proc)
        started = [threading.Event() for _ in range(STREAMS)]
        threads = [threading.Thread(target=_stream, args=(port, e), daemon=True)
                   for e in started]
        for t in threads:
            t.start()
        assert all(e.wait(20) for e in started), "the streams did not start"
        if to_group:
            os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C in a terminal does
        else:
            os.kill(proc.pid, signal.SIGINT)
        code = proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    output = log.read_text()
    assert code in (0, 128 + signal.SIGINT), f"exit {code}:\n{output}"
    assert "Task was destroyed" not in output, output
    assert "Traceback" not in output, output
    assert "Exception ignored" not in output, output
