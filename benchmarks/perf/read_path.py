"""Client CPU per socket read, without a network: one streamed chunk per read.

Feeds pre-built reads to a ClientConnection on a scripted socket, through the same sink the
benchmark uses: plain HTTP, and HTTPS (records encrypted beforehand by an in-memory TLS server
with a self-signed certificate from ``openssl req``). Prints the best of many repeats.

    python benchmarks/perf/read_path.py [--repo PATH]   # --repo: time another checkout
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ssl
import sys
import tempfile
import timeit
from pathlib import Path

from client_fidelity import self_signed

N = 3000
REPEATS = 40


class ScriptedSocket:
    def fileno(self):
        return 7

    def setblocking(self, flag):
        pass

    def setsockopt(self, *args):
        pass

    def send(self, data):
        return len(data)

    def close(self):
        pass


class NoLoop:
    def __init__(self):
        self.loop = asyncio.new_event_loop()

    def add_reader(self, *args):
        pass

    def remove_reader(self, *args):
        pass

    def add_writer(self, *args):
        pass

    def remove_writer(self, *args):
        pass

    def create_future(self):
        return self.loop.create_future()

    def call_soon(self, *args):
        pass


def chunk(k: int) -> bytes:
    ev = (b'data: {"id":"cmpl-1","object":"text_completion","created":1,"model":"m","choices":'
          b'[{"index":0,"text":" w","logprobs":null,"finish_reason":null}],"usage":'
          b'{"prompt_tokens":1024,"completion_tokens":%d,"total_tokens":1041}}\n\n' % (k + 1))
    return b"%x\r\n%b\r\n" % (len(ev), ev)


def tls_pair(folder: Path):
    cert, key = self_signed(folder)
    sctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    sctx.load_cert_chain(cert, key)
    cctx = ssl.create_default_context(cafile=str(cert))
    bios = [ssl.MemoryBIO() for _ in range(4)]
    c = cctx.wrap_bio(bios[0], bios[1], server_hostname="127.0.0.1")
    s = sctx.wrap_bio(bios[2], bios[3], server_side=True)
    for _ in range(6):
        for obj, out, peer_in in ((c, bios[1], bios[2]), (s, bios[3], bios[0])):
            with contextlib.suppress(ssl.SSLWantReadError):
                obj.do_handshake()
            if out.pending:
                peer_in.write(out.read())
    return c, bios[0], bios[1], s, bios[3]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repo", default=str(Path(__file__).resolve().parents[2]))
    args = ap.parse_args()
    sys.path.insert(0, args.repo)
    from infersweep.bench.httpconn import ClientConnection
    from infersweep.bench.stream import StreamSink

    head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    total = N * REPEATS + 1
    plain = [chunk(k) for k in range(total)]
    conn = ClientConnection(ScriptedSocket(), NoLoop(), None)
    conn.request(b"x", b"", StreamSink())
    conn.feed(head, 0)
    it = iter(plain)
    best = min(timeit.repeat(lambda: conn.feed(next(it), 1), number=N, repeat=REPEATS))
    print(f"http : {best / N * 1e6:.2f} µs per read")
    try:
        from infersweep.bench.tls import TLSSession
    except ImportError:
        return  # a checkout without https
    with tempfile.TemporaryDirectory() as tmp:
        c, cin, cout, s, sout = tls_pair(Path(tmp))
    s.write(head)  # records are numbered: encrypt them in the order they are fed
    first = sout.read()
    records = []
    for k in range(total):
        s.write(chunk(k))
        records.append(sout.read())
    tconn = ClientConnection(ScriptedSocket(), NoLoop(), None, TLSSession(c, cin, cout))
    sink = StreamSink()
    tconn.request(b"x", b"", sink)
    tconn._feed_tls(first, 0)
    it = iter(records)
    best = min(timeit.repeat(lambda: tconn._feed_tls(next(it), 1), number=N, repeat=REPEATS))
    assert not sink.error_class and len(sink.chunk_t) == N * REPEATS, sink.error
    print(f"https: {best / N * 1e6:.2f} µs per read")


if __name__ == "__main__":
    main()
