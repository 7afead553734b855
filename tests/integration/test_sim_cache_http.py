"""`sim serve` with the KV model, over real HTTP: HEAD on keep-alive connections, the
engines' cache metrics, cached tokens in usage, and refused flag combinations."""

import http.client
import json
import subprocess
import sys

from tests.integration.simharness import free_port

CACHE = ["--enable-prefix-caching", "--page-size", "8", "--kv-pool-tokens", "4096",
         "--cpu-offload-gb", "0.01", "--kv-bytes-per-token", "1000", "--prefill-tps", "1e6",
         "--decode-base-ms", "1"]


def test_head_has_no_body_and_the_connection_stays_usable(sim):
    s = sim(*CACHE)
    conn = http.client.HTTPConnection("127.0.0.1", s.port, timeout=5)
    conn.request("HEAD", "/metrics")
    r = conn.getresponse()
    assert r.status == 200 and int(r.getheader("Content-Length")) > 0
    assert r.read() == b""
    conn.request("HEAD", "/no/such/route")
    r = conn.getresponse()
    assert r.status == 404 and r.read() == b""
    conn.request("GET", "/metrics")  # the same connection: nothing left over from HEAD
    r = conn.getresponse()
    text = r.read().decode()
    assert r.status == 200
    for name in ("vllm:prefix_cache_queries_total", "vllm:external_prefix_cache_hits_total",
                 "vllm:kv_cache_usage_perc", "vllm:num_preemptions_total",
                 "sglang:cached_tokens_total", "sglang:token_usage",
                 "sglang:hicache_host_total_tokens", "vllm:num_requests_running"):
        assert f"# TYPE {name} " in text and f"\n{name}{{model_name=\"m\"" in text
    conn.close()


def _post(conn, body: dict, session: str) -> dict:
    conn.request("POST", "/v1/completions", json.dumps(body),
                 {"Content-Type": "application/json", "X-Correlation-ID": session})
    r = conn.getresponse()
    raw = r.read()
    assert r.status == 200, raw
    if not body.get("stream"):
        return json.loads(raw)["usage"]
    events = [json.loads(e[6:]) for e in raw.decode().split("\n\n") if e.startswith("data: {")]
    return [e["usage"] for e in events if e.get("usage")][-1]


def test_a_second_turn_reports_its_cached_prefix_streamed_and_not(sim):
    s = sim(*CACHE, "--dp-size", "2", "--dp-routing", "session")
    conn = http.client.HTTPConnection("127.0.0.1", s.port, timeout=5)
    turn1 = " ".join(f"w{i}" for i in range(50))
    body = {"model": "m", "prompt": turn1, "max_tokens": 3, "stream": True,
            "stream_options": {"include_usage": True}}
    assert _post(conn, body, "tree-1")["prompt_tokens_details"] == {"cached_tokens": 0}
    body["prompt"] = turn1 + " answer and more"
    assert _post(conn, body, "tree-1")["prompt_tokens_details"] == {"cached_tokens": 48}
    body.update(stream=False, prompt=turn1 + " again")
    assert _post(conn, body, "tree-1")["prompt_tokens_details"] == {"cached_tokens": 48}
    stats = json.loads(s.get("/debug/stats"))
    assert stats["kv"]["hits"] == 96 and stats["kv"]["queries"] == 50 + 53 + 51
    assert sorted(r["kv_queries"] for r in stats["ranks"])[0] == 0  # one rank got them all
    conn.close()


def test_cache_flags_that_cannot_work_exit_with_a_message():
    p = subprocess.run([sys.executable, "-m", "infersweep", "sim", "serve", "--port",
                        str(free_port()), "--cpu-offload-gb", "1"],
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == 1
    assert "--cpu-offload-gb needs --enable-prefix-caching" in p.stderr
    assert "Traceback" not in p.stderr
