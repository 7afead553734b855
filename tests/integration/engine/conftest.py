"""A real third-party engine for the client's tests: `transformers serve` on this CPU with a
tiny random model built offline (tinymodel.py; facts in ../shared/specs/real-engine-local.md).

Started once per session on a free port, warmed with one request (the engine builds its
continuous-batching manager on the first one), stopped at the end. Where transformers (with
its serving extra and torch) is not installed the tests skip and say so; with
INFERSWEEP_REQUIRE_ENGINE=1 they fail instead, so CI never skips them. Install:
``pip install 'transformers[serving]==5.17.0' torch==2.13.0``.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.integration.simharness import free_port

REQUIRE_ENV = "INFERSWEEP_REQUIRE_ENGINE"
INSTALL = "pip install 'transformers[serving]==5.17.0' torch==2.13.0"
NEEDED = ("transformers", "torch", "tokenizers", "fastapi", "uvicorn")
START_TIMEOUT_S = 300.0  # import and load: 20-30 s on 2 shared cores
WARM_TIMEOUT_S = 300.0
# The engine's own settings: offline, one thread (two would fight the client for 2 cores),
# a KV cache of 320 blocks and a batch of at most 512 tokens. Left to size itself from host
# memory, the batch buffers took 8.6 GB and the first request 64 s; with 512, 0.6 s.
ENGINE_ARGS = ("--continuous-batching", "--device", "cpu", "--cb-num-blocks", "320",
               "--cb-max-batch-tokens", "512")


def engine_absent(reason: str):
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"{reason} ({REQUIRE_ENV}=1: CI must provide it)")
    pytest.skip(reason)


@dataclass
class Engine:
    url: str
    port: int
    model: str  # the model folder: also the name requests must use
    log: Path
    warm_s: float

    def tail(self) -> str:
        with contextlib.suppress(OSError):
            return self.log.read_text(errors="replace")[-3000:]
        return ""


def _engine_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "TRANSFORMERS_"))}
    env.update(OMP_NUM_THREADS="1", HF_HOME=str(home), HF_HUB_OFFLINE="1",
               TRANSFORMERS_OFFLINE="1", HF_HUB_DISABLE_UPDATE_CHECK="1",
               HF_HUB_DISABLE_TELEMETRY="1", TOKENIZERS_PARALLELISM="false")
    return env


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory) -> Path:
    missing = [m for m in NEEDED if not _importable(m)]
    if missing:
        engine_absent(f"the real-engine tests need {', '.join(missing)} ({INSTALL})")
    out = tmp_path_factory.mktemp("tiny-llama")
    home = tmp_path_factory.mktemp("hf-home")
    done = subprocess.run([sys.executable, "-m", "tests.integration.engine.tinymodel", str(out)],
                          cwd=REPO, env=_engine_env(home), capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return out


def _get(url: str, timeout: float) -> int:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status
    except (urllib.error.URLError, OSError):
        return 0


def _warm(url: str, model: str) -> None:
    body = json.dumps({"model": model, "prompt": "w1 w2 w3 w4", "max_tokens": 2}).encode()
    req = urllib.request.Request(f"{url}/v1/completions", body,
                                 {"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=WARM_TIMEOUT_S) as r:
        answer = json.loads(r.read())
    assert answer["usage"]["completion_tokens"] == 2, answer


@pytest.fixture(scope="session")
def engine(tiny_model, tmp_path_factory):
    port = free_port()
    home = tmp_path_factory.mktemp("hf-home-serve")
    log = tmp_path_factory.mktemp("engine-log") / "transformers-serve.log"
    cmd = [sys.executable, "-m", "transformers.cli.transformers", "serve", str(tiny_model),
           *ENGINE_ARGS, "--host", "127.0.0.1", "--port", str(port)]
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.STDOUT, env=_engine_env(home),
                                start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while _get(f"{url}/health", 2) != 200:
            assert proc.poll() is None, f"transformers serve exited {proc.returncode}:\n" \
                                        f"{log.read_text(errors='replace')[-3000:]}"
            assert time.monotonic() < deadline, "transformers serve is not healthy after " \
                                                f"{START_TIMEOUT_S:g} s"
            time.sleep(0.5)
        t = time.monotonic()
        _warm(url, str(tiny_model))
        yield Engine(url, port, str(tiny_model), log, time.monotonic() - t)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)  # its own session: the server and children
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
