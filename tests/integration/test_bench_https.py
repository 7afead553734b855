"""https: the simulator behind TLS with a certificate made here, and the client against it."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import ssl
import subprocess
import sys
import threading
import time
import urllib.request

import orjson
import pytest

from infersweep.bench.httpconn import ArrivalClock, HTTPError, Pool, build_head
from infersweep.bench.stream import StreamSink
from infersweep.bench.tls import TLSConfig
from tests.integration.broken_engine import BrokenEngine, good_stream
from tests.integration.simharness import FAST, free_port
from tests.integration.tlscerts import make_certs

pytestmark = pytest.mark.integration
LINUX = sys.platform.startswith("linux")
SECRET = "sk-test-7f3a9c1e5b"


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    d = tmp_path_factory.mktemp("certs")
    return {"ok": make_certs(d, ["localhost", "127.0.0.1"]),
            "other": make_certs(d, ["other.example"], stem="other")}


class TLSSim:
    def __init__(self, certs, *args: str):
        self.port = free_port(span=4)
        self.url = f"https://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "infersweep", "sim", "serve", "--port", str(self.port),
             "--served-model-name", "m", "--tls-cert", str(certs.cert), "--tls-key",
             str(certs.key), *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        ctx = ssl.create_default_context(cafile=str(certs.ca))
        ctx.check_hostname = False  # some tests serve a certificate for another name
        end = time.monotonic() + 30
        while True:
            if self.proc.poll() is not None:
                raise AssertionError(self.proc.stderr.read().decode(errors="replace"))
            try:
                with urllib.request.urlopen(self.url + "/health", timeout=1, context=ctx) as r:
                    if r.status == 200:
                        return
            except OSError:
                if time.monotonic() > end:
                    raise
                time.sleep(0.1)

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


@pytest.fixture
def tls_sim(certs):
    started = []

    def start(*args, which="ok"):
        s = TLSSim(certs[which], *args)
        started.append(s)
        return s

    yield start
    for s in started:
        s.stop()


def bench(url, tmp, *args, env=None, timeout=120):
    cmd = [sys.executable, "-m", "infersweep", "bench", "serve", "--base-url", url, "--model", "m",
           "--random-input-len", "64", "--random-output-len", "16", "--save-result",
           "--result-dir", str(tmp), "--result-filename", "res.json", "--ready-timeout", "10",
           "--disable-tqdm", *args]
    e = {k: v for k, v in os.environ.items() if k not in ("SSL_CERT_FILE", "SSL_CERT_DIR")}
    e.update(env or {})
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=e)
    res = tmp / "res.json"
    return p, (json.loads(res.read_text()) if res.exists() else None)


def test_https_run_with_a_private_ca(tls_sim, certs, tmp_path):
    s = tls_sim(*FAST)
    p, r = bench(s.url, tmp_path, "--num-prompts", "40", "--max-concurrency", "8",
                 "--num-workers", "2", "--ca-cert", str(certs["ok"].ca), "--ignore-eos")
    assert p.returncode == 0, p.stderr
    assert r["completed"] == 40 and r["failed"] == 0
    assert r["mean_itl_ms"] == pytest.approx(2.0, abs=1.0)
    # arrival times still come from the kernel's receive stamps of the TLS bytes
    assert r["infersweep"]["timestamp_source"] == ("kernel" if LINUX else "user")


def test_ssl_cert_file_is_honoured_and_the_system_store_does_not_trust_a_private_ca(
        tls_sim, certs, tmp_path):
    s = tls_sim(*FAST)
    p, r = bench(s.url, tmp_path, "--num-prompts", "4")
    assert p.returncode == 1 and r is None
    assert "not trusted" in p.stderr and "--ca-cert" in p.stderr and "Traceback" not in p.stderr
    p, r = bench(s.url, tmp_path, "--num-prompts", "4", env={"SSL_CERT_FILE": str(certs["ok"].ca)})
    assert p.returncode == 0, p.stderr
    assert r["completed"] == 4


def test_host_name_is_checked_and_insecure_skips_it(tls_sim, certs, tmp_path):
    s = tls_sim(*FAST, which="other")  # a certificate for other.example only
    ca = str(certs["other"].ca)
    p, r = bench(s.url, tmp_path, "--num-prompts", "4", "--ca-cert", ca)
    assert p.returncode == 1 and "not trusted" in p.stderr and "127.0.0.1" in p.stderr
    p, r = bench(s.url, tmp_path, "--num-prompts", "3", "--ca-cert", ca, "--no-probe")
    assert p.returncode == 2 and r["infersweep"]["errors"] == {"tls.verify": 3}
    p, r = bench(s.url, tmp_path, "--num-prompts", "4", "--insecure")
    assert p.returncode == 0, p.stderr
    assert r["completed"] == 4


def test_https_to_a_plain_http_server_is_a_tls_error(tmp_path):
    """The plain server waits for a request head that a TLS hello never completes: the
    handshake times out, reported as TLS, not as a connect or request timeout."""
    with BrokenEngine(lambda i: [good_stream()]) as engine:
        url = engine.url.replace("http://", "https://")
        p, _ = bench(url, tmp_path, "--num-prompts", "2", "--ready-timeout", "2")
    assert p.returncode == 1 and "Traceback" not in p.stderr
    assert "tls.error" in p.stderr and "is it serving https" in p.stderr


@pytest.mark.parametrize(("args", "msg"), [
    (["--ca-cert", "missing.pem"], "no such file"),
    (["--ca-cert", "not-pem.txt"], "not a PEM file"),
])
def test_bad_ca_file_is_a_clear_error_before_any_request(args, msg, tmp_path):
    (tmp_path / "not-pem.txt").write_text("hello\n")
    p = subprocess.run([sys.executable, "-m", "infersweep", "bench", "serve", "--base-url",
                        "https://127.0.0.1:9", "--model", "m", "--num-prompts", "2", *args],
                       capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert p.returncode == 1 and msg in p.stderr and "Traceback" not in p.stderr


def test_api_key_is_sent_as_bearer_and_never_written(certs, tmp_path):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(certs["ok"].cert, certs["ok"].key)
    with BrokenEngine(lambda i: [good_stream()], tls=ctx) as engine:
        p, r = bench(engine.url, tmp_path, "--num-prompts", "3", "--ca-cert",
                     str(certs["ok"].ca), "--save-detailed", env={"OPENAI_API_KEY": SECRET})
        seen = list(engine.requests)
    assert p.returncode == 0, p.stderr
    assert r["completed"] == 3
    assert len(seen) >= 5  # /health, the test request, three measured requests
    assert all(h.get("authorization") == f"Bearer {SECRET}" for _, _, h in seen)
    assert SECRET not in p.stdout + p.stderr
    for f in tmp_path.iterdir():
        assert SECRET not in f.read_text(errors="replace"), f.name


def test_a_server_echoing_the_key_does_not_get_it_written(tmp_path):
    body = f'{{"error": {{"message": "Incorrect API key provided: {SECRET}"}}}}'.encode()
    denied = [b"HTTP/1.1 401 Unauthorized\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)]
    with BrokenEngine(lambda i: denied) as engine:
        p, r = bench(engine.url, tmp_path, "--num-prompts", "2", "--no-probe", "--save-detailed",
                     env={"OPENAI_API_KEY": SECRET})
        p2, _ = bench(engine.url, tmp_path / "probe", "--num-prompts", "2",
                      env={"OPENAI_API_KEY": SECRET})
    assert p.returncode == 2 and r["infersweep"]["errors"] == {"http_4xx": 2}
    assert p2.returncode == 1 and "Incorrect API key" in p2.stderr
    assert SECRET not in p.stdout + p.stderr + p2.stdout + p2.stderr
    for f in tmp_path.iterdir():
        if f.is_file():
            assert SECRET not in f.read_text(errors="replace"), f.name
    assert "<OPENAI_API_KEY>" in (tmp_path / "res.records.jsonl").read_text()


def test_api_key_with_a_line_break_is_refused(tmp_path):
    p, _ = bench("http://127.0.0.1:9", tmp_path, "--num-prompts", "2",
                 env={"OPENAI_API_KEY": "sk-1\r\nX-Injected: 1"})
    assert p.returncode == 1 and "OPENAI_API_KEY" in p.stderr and "line break" in p.stderr
    assert "sk-1" not in p.stderr


def test_tls_connection_reuses_keepalive_and_stamps_each_read(tls_sim, certs):
    s = tls_sim(*FAST)

    async def go():
        clock = ArrivalClock("auto")
        pool = Pool("127.0.0.1", s.port, clock=clock, tls=TLSConfig(ca_cert=str(certs["ok"].ca)))
        body = orjson.dumps({"model": "m", "prompt": [1, 2, 3], "max_tokens": 10,
                             "ignore_eos": True, "stream": True,
                             "stream_options": {"include_usage": True}})
        head = build_head("POST", "127.0.0.1", s.port, "/v1/completions", len(body))
        sinks = []
        for _ in range(3):
            sink = StreamSink()
            conn = await pool.acquire()
            sent = time.monotonic_ns()
            await asyncio.wait_for(conn.request(head, body, sink), 30)
            after = time.monotonic_ns()
            pool.release(conn)
            sink.finish()
            sinks.append((sent, sink, after))
        pool.close()
        return clock, pool.opened, sinks

    clock, opened, sinks = asyncio.run(go())
    assert opened == 1
    assert clock.source() == ("kernel" if LINUX else "user")
    for sent, sink, after in sinks:
        assert not sink.error_class, sink.error
        assert len(sink.chunk_t) == 10 and sink.usage_out == 10
        assert sent <= sink.t_headers <= sink.chunk_t[0] <= sink.chunk_t[-1] <= after


def _raw_plain_http_server():
    """A listener that answers the first bytes it gets with a plain HTTP 400, then closes."""
    lsock = socket.socket()
    lsock.bind(("127.0.0.1", 0))
    lsock.listen(1)

    def answer():
        c, _ = lsock.accept()
        c.recv(4096)
        c.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
        c.close()

    threading.Thread(target=answer, daemon=True).start()
    return lsock


async def _acquire_failure(port: int):
    pool = Pool("127.0.0.1", port, tls=TLSConfig(), connect_timeout=0.5)
    t0 = time.monotonic()
    with pytest.raises(HTTPError) as ei:
        await pool.acquire()
    return ei.value, time.monotonic() - t0


def test_tls_failures_in_the_pool_are_request_failures():
    with BrokenEngine(lambda i: [good_stream()]) as silent:  # plain http, waits for a head
        err, elapsed = asyncio.run(_acquire_failure(silent.port))
    assert err.error_class == "tls.error" and "timed out" in str(err) and elapsed < 2
    lsock = _raw_plain_http_server()
    try:
        err, _ = asyncio.run(_acquire_failure(lsock.getsockname()[1]))
    finally:
        lsock.close()
    assert err.error_class == "tls.error" and "is it serving https" in str(err)
