from __future__ import annotations

from infersweep.evals import client


def test_completions_body_streams_and_sends_the_completions_limit_only():
    s = client.GenSettings(model="m")
    b = client.build_body(s, False, "Question: 1+1?\nAnswer:", ["Question:", "</s>", ""])
    assert b["stream"] is True and b["stream_options"] == {"include_usage": True}
    assert b["max_tokens"] == 5376 and "max_completion_tokens" not in b
    assert b["stop"] == ["Question:", "</s>"] and b["prompt"].endswith("Answer:")
    assert b["temperature"] == 0.0


def test_chat_body_sends_messages_and_both_limits():
    s = client.GenSettings(model="m", max_completion_tokens=100)
    msgs = [{"role": "user", "content": "hi"}]
    b = client.build_body(s, True, msgs, [])
    assert b["messages"] == msgs and "stop" not in b
    assert b["max_completion_tokens"] == b["max_tokens"] == 100


def test_request_key_depends_on_prompt_and_settings_only():
    s = client.GenSettings(model="m")
    a = client.request_key(client.build_body(s, False, "p", ["x"]))
    assert a == client.request_key(client.build_body(s, False, "p", ["x"]))
    assert a != client.request_key(client.build_body(s, False, "q", ["x"]))
    s2 = client.GenSettings(model="m", max_completion_tokens=10)
    assert a != client.request_key(client.build_body(s2, False, "p", ["x"]))


def test_journal_keeps_successes_and_skips_a_cut_line(tmp_path):
    j = tmp_path / "requests.jsonl"
    j.write_bytes(b'{"key":"a","ok":true,"text":"#### 1"}\n'
                  b'{"key":"b","ok":false,"text":""}\n'
                  b'{"key":"c","ok":tr')
    done = client.read_journal(j)
    assert set(done) == {"a"} and done["a"]["text"] == "#### 1"
    assert client.read_journal(tmp_path / "none.jsonl") == {}
