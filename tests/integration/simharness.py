"""Helpers for integration tests that run the simulator and the client as real processes."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

GSM8K = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "gsm8k" / "test.jsonl"
FAST = ["--fixed-ttft-ms", "5", "--fixed-itl-ms", "2"]


# Below the kernel's ephemeral range (32768+ on Linux), so the client sockets of other tests
# never hold a port a simulator is about to listen on.
_PORTS = range(20000, 32000, 8)


def free_port(span: int = 1) -> int:
    """A free loopback port P with P..P+span-1 all free (a cluster listens on consecutive
    ports: the front end, then its workers)."""
    import random

    for base in random.sample(_PORTS, len(_PORTS)):
        socks = []
        try:
            for port in range(base, base + span):
                s = socket.socket()
                socks.append(s)
                s.bind(("127.0.0.1", port))
            return base
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    raise AssertionError("no free block of loopback ports")


def wait_health(url: str, proc, timeout: float = 20) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
            raise AssertionError(f"simulator exited early ({proc.returncode}): {err[-2000:]}")
        try:
            with urllib.request.urlopen(url + "/health", timeout=1) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.1)
    raise AssertionError(f"{url} not healthy")


class Sim:
    def __init__(self, *args: str, cmd: str = "serve"):
        self.port = free_port(span=4)
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "infersweep", "sim", cmd, "--port", str(self.port),
             "--served-model-name", "m", *args],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        wait_health(self.url, self.proc, timeout=30)

    def get(self, path: str) -> bytes:
        with urllib.request.urlopen(self.url + path, timeout=5) as r:
            return r.read()

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def bench(url: str, tmp: Path, *args: str, timeout: float = 120):
    cmd = [sys.executable, "-m", "infersweep", "bench", "serve", "--base-url", url, "--model", "m",
           "--random-input-len", "64", "--random-output-len", "16", "--save-result",
           "--result-dir", str(tmp), "--result-filename", "res.json", "--ready-timeout", "10",
           *args]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    res = tmp / "res.json"
    data = json.loads(res.read_text()) if res.exists() else None
    return p, data
