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


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_health(url: str, proc, timeout: float = 20) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        assert proc.poll() is None, "simulator exited early"
        try:
            with urllib.request.urlopen(url + "/health", timeout=1) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.1)
    raise AssertionError(f"{url} not healthy")


class Sim:
    def __init__(self, *args: str, cmd: str = "serve"):
        self.port = free_port()
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
