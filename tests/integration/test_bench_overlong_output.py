"""A server whose usage claims more output than the request allowed: no engine can return
more tokens than ``max_tokens`` (under ``--ignore-eos`` it returns exactly that many), so each
such request is a failed request (``output_over_limit``), never a success whose claimed
tokens make a throughput."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.integration.simharness import bench

pytestmark = pytest.mark.integration

CHUNKS = 24
CLAIMED = 800_000


class _Inflating(BaseHTTPRequestHandler):
    """Streams 24 one-token chunks, then a usage object claiming 800,000 tokens."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args):  # quiet
        pass

    def _send(self, body: bytes, kind: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):  # noqa: N802 - http.server's name
        self._send(json.dumps({"data": [{"id": "m", "object": "model"}]}).encode(),
                   "application/json")

    def do_POST(self):  # noqa: N802 - http.server's name
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        prompt_tokens = 64
        events = [{"choices": [{"index": 0, "text": f" t{i}"}]} for i in range(CHUNKS)]
        events[-1]["choices"][0]["finish_reason"] = "length"
        events.append({"choices": [], "usage": {
            "prompt_tokens": prompt_tokens, "completion_tokens": CLAIMED,
            "total_tokens": prompt_tokens + CLAIMED}})
        assert body["max_tokens"] < CLAIMED
        data = b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events)
        self._send(data + b"data: [DONE]\n\n", "text/event-stream")


@pytest.fixture
def inflating():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Inflating)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_usage_beyond_max_tokens_fails_every_request(inflating, tmp_path):
    p, r = bench(inflating, tmp_path, "--num-prompts", "8", "--max-concurrency", "2",
                 "--ignore-eos")
    assert p.returncode != 0, p.stdout + p.stderr
    assert "Traceback" not in p.stderr
    assert r["completed"] == 0 and r["failed"] == 8
    assert r["total_output_tokens"] == 0 and r["output_throughput"] == 0
    lines = (tmp_path / "res.records.jsonl").read_text().splitlines()
    records = [json.loads(x) for x in lines[1:]]  # after the meta line
    assert {x["error_class"] for x in records} == {"output_over_limit"}
    assert (f"usage.completion_tokens {CLAIMED} exceeds the 16 tokens the request allowed "
            f"(in {CHUNKS} chunks)") in records[0]["error"]
