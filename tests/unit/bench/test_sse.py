import pytest

from infersweep.bench.sse import SSEParser


def feed_all(parts):
    p = SSEParser()
    out = []
    for part in parts:
        out.extend(p.feed(part))
    return out, p


def test_simple_events_and_done():
    evs, _ = feed_all([b'data: {"a":1}\n\ndata: [DONE]\n\n'])
    assert [e.data for e in evs] == [b'{"a":1}', b"[DONE]"]
    assert all(e.event == "message" for e in evs)


def test_comments_and_keepalives_are_skipped():
    evs, _ = feed_all([b": keep-alive\n\n: ping\ndata: x\n\n"])
    assert [e.data for e in evs] == [b"x"]


def test_multiline_data_joined_with_newline():
    evs, _ = feed_all([b"data: line1\ndata: line2\ndata:line3\n\n"])
    assert evs[0].data == b"line1\nline2\nline3"


def test_crlf_and_cr_line_ends():
    evs, _ = feed_all([b"data: a\r\n\r\ndata: b\r\rdata: c\n\n"])
    assert [e.data for e in evs] == [b"a", b"b", b"c"]


def test_crlf_split_across_reads():
    evs, _ = feed_all([b"data: a\r", b"\n\r", b"\ndata: b\r\n", b"\r\n"])
    assert [e.data for e in evs] == [b"a", b"b"]


def test_event_split_byte_by_byte():
    raw = b'event: error\ndata: {"error":"x"}\n\ndata: y\n\n'
    evs, _ = feed_all([raw[i : i + 1] for i in range(len(raw))])
    assert [(e.event, e.data) for e in evs] == [("error", b'{"error":"x"}'), ("message", b"y")]


def test_no_line_length_limit():
    big = b"x" * (300 * 1024)
    evs, _ = feed_all([b"data: " + big[:100000], big[100000:] + b"\n\n"])
    assert len(evs) == 1 and evs[0].data == big


def test_id_retry_and_unknown_fields_ignored_and_dataless_event_dropped():
    evs, p = feed_all([b"id: 7\nretry: 10\nfoo: bar\n\ndata: z\nid: 8\n\ndata: partial"])
    assert [e.data for e in evs] == [b"z"]
    assert p.pending() == b"data: partial"


SINGLE_CASES = [
    b"data: x\n\n", b"data: \n\n", b'data: {"a":1}\n\n', b"data: [DONE]\n\n",
    b"data:x\n\n",            # no space: not the fast shape
    b"data: a\ndata: b\n\n",  # two lines
    b"data: a\r\n\r\n", b"data: a\r\r", b"data: a\rb\n\n",  # CR line ends
    b": ping\n\n", b"event: error\ndata: x\n\n", b"data: a\n\ndata: b\n\n",
    b"data: a\n", b"data: a", b"\n\n", b"",
]


@pytest.mark.parametrize("data", SINGLE_CASES)
def test_single_data_fast_path_agrees_with_feed_or_declines(data):
    fast = SSEParser().single_data(data)
    evs = SSEParser().feed(data)
    if fast is not None:
        assert [(e.data, e.event) for e in evs] == [(fast, "message")]


def test_single_data_accepts_only_the_plain_shape():
    assert SSEParser().single_data(b"data: x\n\n") == b"x"
    for data in (b"data:x\n\n", b"data: a\ndata: b\n\n", b"data: a\r\n\r\n", b"data: a\rb\n\n",
                 b"data: a\n\ndata: b\n\n", b"data: a\n"):
        assert SSEParser().single_data(data) is None


def test_single_data_declines_while_the_parser_holds_bytes():
    p = SSEParser()
    assert p.feed(b"data: hal") == []
    assert p.single_data(b"data: x\n\n") is None  # would drop the buffered half event
    assert [e.data for e in p.feed(b"f\n\n")] == [b"half"]
    p.feed(b"data: a\r")  # a CR that may be half of CRLF
    assert p.single_data(b"data: x\n\n") is None
