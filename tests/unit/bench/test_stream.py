import orjson
import pytest

from infersweep.bench.failures import ProtocolError
from infersweep.bench.stream import StreamSink


def chunk(text="t", usage=None, choices=True):
    obj = {"choices": [{"index": 0, "text": text}] if choices else []}
    if usage is not None:
        obj["usage"] = usage
    return b"data: " + orjson.dumps(obj) + b"\n\n"


def run(parts, status=200, chat=False, keep_text=False):
    """Feed reads as the connection does: a ProtocolError ends the response there."""
    s = StreamSink(chat=chat, keep_text=keep_text)
    s.on_headers(status, {}, 0)
    for i, p in enumerate(parts):
        try:
            s.on_body(p, 1000 * (i + 1))
        except ProtocolError as exc:
            assert exc.error_class == s.error_class and str(exc) == s.error
            s.raised = exc.error_class
            return s
    s.finish()
    return s


def test_success_counts_chunks_and_usage():
    s = run([chunk(), chunk(), chunk(usage={"prompt_tokens": 5, "completion_tokens": 2},
                                      choices=False), b"data: [DONE]\n\n"])
    assert not s.error_class
    assert s.chunk_t == [1000, 2000]
    assert s.usage_out == 2 and s.usage_in == 5


def test_missing_usage_is_an_error_not_zero_tokens():
    s = run([chunk(), chunk(), b"data: [DONE]\n\n"])
    assert s.error_class == "missing_usage"


def test_error_object_mid_stream():
    s = run([chunk(), b'data: {"object":"error","message":"boom","code":500}\n\n', chunk()])
    assert s.error_class == "stream_error" and "boom" in s.error
    assert len(s.chunk_t) == 1  # nothing counted after the error


def test_error_event_type():
    s = run([b'event: error\ndata: {"message":"overloaded"}\n\n'])
    assert s.error_class == "stream_error"


def test_malformed_json_is_classified():
    s = run([b"data: {not json\n\n"])
    assert s.error_class == s.raised == "protocol.bad_json"


def test_http_error_keeps_body_excerpt():
    s = run([b'{"message":"too long"}'], status=400)
    assert s.error_class == "http_4xx" and "too long" in s.error and "400" in s.error
    assert run([b"x"], status=503).error_class == "http_5xx"


def test_no_token_chunk_is_an_error():
    s = run([chunk(usage={"completion_tokens": 0}, choices=False), b"data: [DONE]\n\n"])
    assert s.error_class == "no_tokens"


def test_continuous_usage_gives_tokens_per_chunk():
    s = run([chunk(usage={"completion_tokens": 1}), chunk(usage={"completion_tokens": 4}),
             chunk(usage={"completion_tokens": 6}), b"data: [DONE]\n\n"])
    assert s.chunk_tok == [1, 3, 2]
    assert s.usage_out == 6


def test_chat_text_and_role_only_first_delta_counts_as_chunk():
    role = b'data: {"choices":[{"index":0,"delta":{"role":"assistant"}}]}\n\n'
    c = b'data: {"choices":[{"index":0,"delta":{"content":"hi"}}]}\n\n'
    u = b'data: {"choices":[],"usage":{"completion_tokens":1,"prompt_tokens":3}}\n\n'
    s = run([role, c, u], chat=True)
    assert not s.error_class and len(s.chunk_t) == 2 and s.text_chunks == 1


def test_final_event_without_blank_line_is_dispatched():
    s = run([chunk(), b'data: {"choices":[],"usage":{"completion_tokens":1}}'])
    assert not s.error_class and s.usage_out == 1


def test_fast_and_general_paths_give_the_same_record():
    """Whole single-event reads take the fast path; the same bytes split across reads (or
    packed into one read) go through the general parser: the results must agree."""
    events = [chunk(usage={"prompt_tokens": 7, "completion_tokens": k}) for k in (1, 2, 3)]
    events += [chunk(usage={"prompt_tokens": 7, "completion_tokens": 3}, choices=False),
               b"data: [DONE]\n\n"]
    one_per_read = run(events)
    wire = b"".join(events)
    byte_per_read = run([wire[i : i + 1] for i in range(len(wire))])
    all_in_one = run([wire])
    for s in (one_per_read, byte_per_read):
        assert not s.error_class
        assert s.chunk_tok == [1, 1, 1] and s.usage_out == 3 and s.usage_in == 7
        assert s.text_chunks == 3
    assert all_in_one.chunk_tok == [1, 1, 1] and all_in_one.usage_out == 3


def test_fast_path_still_sees_errors_and_bad_json():
    s = run([chunk(), b'data: {"error":{"message":"oom"}}\n\n'])
    assert s.error_class == "stream_error" and "oom" in s.error
    assert run([b"data: {not json\n\n"]).error_class == "protocol.bad_json"
    assert run([b"data: [1,2]\n\n"]).error_class == "protocol.bad_json"


def test_absent_or_null_counts_are_unknown_not_errors():
    s = run([chunk(usage={"prompt_tokens": 3}), chunk(), b'data: {"choices":[],"usage":null}\n\n',
             b"data: [DONE]\n\n"])
    assert s.chunk_tok == [-1, -1]
    assert s.error_class == "missing_usage"


C = '{"index":0,"text":"t"}'
BAD_FIELDS = [  # (event data, chat) -> protocol.bad_field, raised at once
    ('{"choices":"abc"}', False),
    ('{"choices":{"0":{"text":"t"}}}', False),
    ('{"choices":["t"]}', False),
    ('{"choices":[' + C + ',"x"]}', False),
    ('{"choices":[{"index":0,"text":7}]}', False),
    ('{"choices":[{"index":0,"delta":"hi"}]}', True),
    ('{"choices":[{"index":0,"delta":{"content":12}}]}', True),
    ('{"choices":[{"index":0,"delta":{"content":["a"]}}]}', True),
    ('{"choices":[' + C + '],"usage":{"completion_tokens":"3"}}', False),
    ('{"choices":[' + C + '],"usage":{"completion_tokens":true}}', False),
    ('{"choices":[' + C + '],"usage":{"completion_tokens":-1}}', False),
    ('{"choices":[' + C + '],"usage":{"completion_tokens":2.5}}', False),
    ('{"choices":[' + C + '],"usage":{"prompt_tokens":"7"}}', False),
    ('{"choices":[],"usage":[1,2]}', False),
    ('{"choices":[],"usage":"none"}', False),
    ('{"choices":[' + C + '],"usage":{"completion_tokens":100000000000000000000000}}', False),
]


@pytest.mark.parametrize(("data", "chat"), BAD_FIELDS)
def test_a_field_of_the_wrong_type_is_bad_field_at_once(data, chat):
    s = run([chunk(), b"data: " + data.encode() + b"\n\n", chunk()], chat=chat, keep_text=True)
    assert s.error_class == s.raised == "protocol.bad_field", s.error
    assert len(s.chunk_t) == 1  # nothing from the bad event or after it
    assert all(isinstance(x, str) for x in s.text)  # only well-typed text kept


def test_completion_tokens_going_down_is_bad_field():
    s = run([chunk(usage={"completion_tokens": 3}), chunk(usage={"completion_tokens": 2})])
    assert s.error_class == "protocol.bad_field" and "went down" in s.error


def test_bad_final_event_without_terminator_is_classified_in_finish():
    s = StreamSink()
    s.on_headers(200, {}, 0)
    s.on_body(chunk(), 1)
    s.on_body(b'data: {"choices":[],"usage":{"completion_tokens":"x"}}', 2)
    s.finish()  # must not raise
    assert s.error_class == "protocol.bad_field"
