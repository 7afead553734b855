"""Property tests of the SSE and HTTP response parsers (hypothesis).

1. Any split of a valid stream into reads gives what one read gives.
2. Any bytes, in any split, never raise out of the parser: the outcome is a completed
   response or a request failure of a named protocol/connection class, never a client defect.
"""

from __future__ import annotations

import asyncio

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from infersweep.bench.failures import Failure
from infersweep.bench.httpconn import ClientConnection, HTTPError, Sink
from infersweep.bench.sse import SSEParser
from infersweep.bench.stream import StreamSink

SETTINGS = settings(max_examples=300, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
_LOOP = asyncio.new_event_loop()  # futures only; never run


class _Sock:
    def fileno(self):
        return 7

    def setblocking(self, flag):
        pass

    def setsockopt(self, *a):
        pass

    def send(self, data):
        return len(data)

    def close(self):
        pass


class _Loop:
    def add_reader(self, fd, cb):
        pass

    def remove_reader(self, fd):
        pass

    def add_writer(self, fd, cb):
        pass

    def remove_writer(self, fd):
        pass

    def create_future(self):
        return _LOOP.create_future()


class _Body(Sink):
    def __init__(self):
        self.status = None
        self.body = b""

    def on_headers(self, status, headers, t):
        self.status = status

    def on_body(self, data, t):
        self.body += data


def cut(data: bytes, cuts: list[int]) -> list[bytes]:
    pos = sorted({c % (len(data) + 1) for c in cuts})
    edges = [0, *pos, len(data)]
    return [data[a:b] for a, b in zip(edges, edges[1:], strict=False) if b > a]


def respond(parts: list[bytes], sink: Sink, eof: bool = False):
    """Feed ``parts`` as successive reads; (outcome, sink). outcome: "done", "pending", or the
    failure class."""
    conn = ClientConnection(_Sock(), _Loop(), None)
    fut = conn.request(b"GET / HTTP/1.1\r\n\r\n", b"", sink)
    for i, p in enumerate(parts):
        conn.feed(p, i)  # must never raise
        if fut.done():
            break
    if eof and not fut.done():
        conn._lost(None)
    if not fut.done():
        return "pending", sink
    exc = fut.exception()
    if exc is None:
        return "done", sink
    assert isinstance(exc, HTTPError)
    return exc.error_class, sink


# -- SSE ----------------------------------------------------------------------------------

line_text = st.text(st.characters(blacklist_characters="\r\n", blacklist_categories=["Cs"]),
                    max_size=30).map(lambda s: s.encode())
eol = st.sampled_from([b"\n", b"\r\n", b"\r"])


@st.composite
def sse_stream(draw):
    """(wire bytes, expected [(event type, data)]) of a stream in any of the spec's shapes."""
    wire = b""
    expected = []
    for _ in range(draw(st.integers(0, 6))):
        lines = []
        if draw(st.booleans()):
            lines.append(b":" + draw(line_text))  # a comment
        etype = draw(st.sampled_from([None, "message", "error", "ping"]))
        if etype is not None:
            lines.append(b"event: " + etype.encode())
        datas = draw(st.lists(line_text, max_size=3))
        for d in datas:
            sep = draw(st.sampled_from([b"data: ", b"data:"]))
            if sep == b"data:" and d.startswith(b" "):
                sep = b"data: "  # "data: " + " x" keeps the leading space as data
            lines.append(sep + d)
        if draw(st.booleans()):
            lines.append(b"id: " + draw(line_text))
        end = draw(eol)
        wire += b"".join(x + end for x in lines) + end
        if datas:
            expected.append((etype or "message", b"\n".join(datas)))
    return wire, expected


@given(sse_stream(), st.lists(st.integers(0, 10_000), max_size=12))
@SETTINGS
def test_sse_any_split_gives_the_events_of_one_read(stream, cuts):
    wire, expected = stream
    whole = [(e.event, e.data) for e in SSEParser().feed(wire)]
    p = SSEParser()
    split = [(e.event, e.data) for part in cut(wire, cuts) for e in p.feed(part)]
    assert whole == expected
    assert split == expected


@given(st.binary(max_size=300), st.lists(st.integers(0, 1000), max_size=8))
@SETTINGS
def test_sse_arbitrary_bytes_never_raise_and_fast_path_agrees(data, cuts):
    p = SSEParser()
    for part in cut(data, cuts):
        p.feed(part)
    fast = SSEParser().single_data(data)
    if fast is not None:
        assert [(e.event, e.data) for e in SSEParser().feed(data)] == [("message", fast)]


# -- streamed completions (SSE inside HTTP, through the sink) -------------------------------

def completion_events(n: int, chat: bool) -> list[bytes]:
    if chat:
        ev = [b'data: {"choices":[{"index":0,"delta":{"content":"w%d"}}],"usage":'
              b'{"prompt_tokens":3,"completion_tokens":%d}}\n\n' % (k, k + 1) for k in range(n)]
    else:
        ev = [b'data: {"choices":[{"index":0,"text":"w%d"}],"usage":'
              b'{"prompt_tokens":3,"completion_tokens":%d}}\n\n' % (k, k + 1) for k in range(n)]
    return [*ev, b'data: {"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":%d}}\n\n' % n,
            b"data: [DONE]\n\n"]


@st.composite
def http_stream(draw, events: list[bytes] | None = None):
    """A valid HTTP/1.1 response carrying ``events`` (or arbitrary bytes), chunked or sized."""
    body_parts = events if events is not None else draw(st.lists(st.binary(max_size=40),
                                                                 max_size=5))
    body = b"".join(body_parts)
    nl = draw(st.sampled_from([b"\r\n", b"\n"]))  # bare LF heads are accepted too
    head = [b"HTTP/1.1 200 OK", b"Content-Type: text/event-stream"]
    head += draw(st.lists(st.sampled_from([b"X-A: 1", b"Cache-Control:no-cache", b"Server: sim",
                                           b"X-Empty:"]), max_size=3))
    if draw(st.booleans()):
        head.append(b"Transfer-Encoding: chunked")
        # regroup the body into chunks at arbitrary boundaries, with optional extensions
        pieces = cut(body, draw(st.lists(st.integers(0, 10_000), max_size=6)))
        chunks = b"".join(b"%x%s\r\n%s\r\n" % (len(p), draw(st.sampled_from([b"", b";x=1"])), p)
                          for p in pieces)
        trailer = draw(st.sampled_from([b"", b"X-T: 1\r\n"]))
        wire = nl.join(head) + nl + nl + chunks + b"0\r\n" + trailer + b"\r\n"
    else:
        head.append(b"Content-Length: %d" % len(body))
        wire = nl.join(head) + nl + nl + body
    return wire, body


@given(http_stream(), st.lists(st.integers(0, 10_000), max_size=12))
@SETTINGS
def test_http_any_split_gives_the_body_of_one_read(resp, cuts):
    wire, body = resp
    one, s1 = respond([wire], _Body())
    many, s2 = respond(cut(wire, cuts), _Body())
    assert one == many == "done"
    assert s1.status == s2.status == 200
    assert s1.body == s2.body == body


@given(st.data(), st.integers(1, 5), st.booleans())
@SETTINGS
def test_streamed_completion_any_split_gives_the_same_record(data, n, chat):
    wire, _ = data.draw(http_stream(completion_events(n, chat)))
    cuts = data.draw(st.lists(st.integers(0, 10_000), max_size=12))
    records = []
    for parts in ([wire], cut(wire, cuts)):
        outcome, sink = respond(parts, StreamSink(chat=chat, keep_text=True))
        assert outcome == "done"
        sink.finish()
        records.append((sink.error_class, len(sink.chunk_t), sink.chunk_tok, sink.usage_out,
                        sink.usage_in, "".join(sink.text)))
    assert records[0] == records[1]
    assert records[0] == ("", n, [1] * n, n, 3, "".join(f"w{k}" for k in range(n)))


NAMED = {str(f) for f in Failure if f != Failure.CLIENT_ERROR}


@st.composite
def mutated(draw):
    """A valid response with a few bytes replaced, inserted or dropped, and maybe cut short."""
    wire, _ = draw(http_stream(completion_events(draw(st.integers(1, 3)), False)))
    wire = bytearray(wire)
    for _ in range(draw(st.integers(1, 4))):
        if not wire:
            break
        i = draw(st.integers(0, len(wire) - 1))
        op = draw(st.sampled_from(["replace", "insert", "delete"]))
        b = draw(st.sampled_from([0, 10, 13, 32, 34, 44, 58, 59, 91, 123, 125, 48, 57, 255,
                                  ord("a"), ord("x"), ord("-")]))
        if op == "replace":
            wire[i] = b
        elif op == "insert":
            wire.insert(i, b)
        else:
            del wire[i]
    if draw(st.booleans()):
        wire = wire[: draw(st.integers(0, len(wire)))]
    return bytes(wire)


@given(mutated(), st.lists(st.integers(0, 10_000), max_size=10), st.booleans())
@SETTINGS
def test_broken_responses_end_in_a_named_failure_never_a_raise(wire, cuts, chat):
    outcome, sink = respond(cut(wire, cuts), StreamSink(chat=chat, keep_text=True), eof=True)
    assert outcome in NAMED | {"done"}, (outcome, sink.error)
    if outcome == "done":
        sink.finish()  # must not raise either
    if sink.error_class:
        assert sink.error_class in NAMED, sink.error
    assert all(isinstance(t, str) for t in sink.text)


@given(st.binary(max_size=400), st.lists(st.integers(0, 1000), max_size=8))
@SETTINGS
def test_arbitrary_bytes_never_raise(wire, cuts):
    outcome, _ = respond(cut(wire, cuts), StreamSink(), eof=True)
    assert outcome in NAMED | {"done"}


@given(mutated(), st.lists(st.integers(0, 10_000), min_size=1, max_size=10))
@SETTINGS
def test_the_failure_class_does_not_depend_on_how_reads_split(wire, cuts):
    one, _ = respond([wire], StreamSink(), eof=True)
    many, _ = respond(cut(wire, cuts), StreamSink(), eof=True)
    assume(one != "done" or many != "done")
    assert one == many
