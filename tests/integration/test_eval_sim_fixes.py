"""What an eval needs from the simulator: `stop` honoured, a batch of prompts refused rather
than cut to its first, and a non-streaming mid-stream error sent as a whole HTTP response."""

from __future__ import annotations

import http.client
import json

import pytest

from infersweep.evals import dataset
from tests.integration.simharness import FAST

pytestmark = pytest.mark.integration


def post(url: str, body: dict, path: str = "/v1/completions") -> tuple[int, dict]:
    host, port = url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    try:
        conn.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
        r = conn.getresponse()  # raises BadStatusLine on a response without a status line
        return r.status, json.loads(r.read())
    finally:
        conn.close()


@pytest.fixture
def keyed(tmp_path, sim):
    test, _ = dataset.write(tmp_path, n_test=3, n_train=1)
    question = json.loads(test.read_text().splitlines()[0])["question"]

    def start(*args):
        return sim("--eval-answer-key", str(test), "--eval-accuracy", "1", *FAST, *args)

    return start, f"Question: {question}\nAnswer:"


def test_stop_cuts_the_answer_before_the_stop_string(keyed):
    start, prompt = keyed
    s = start()
    code, full = post(s.url, {"model": "m", "prompt": prompt, "max_tokens": 64})
    assert code == 200 and "####" in full["choices"][0]["text"]
    code, cut = post(s.url, {"model": "m", "prompt": prompt, "max_tokens": 64,
                             "stop": ["####", "Question:"]})
    assert code == 200
    text = cut["choices"][0]["text"]
    assert "####" not in text and full["choices"][0]["text"].startswith(text)
    assert cut["choices"][0]["finish_reason"] == "stop"
    code, err = post(s.url, {"model": "m", "prompt": prompt, "stop": 5})
    assert code == 400 and "'stop' must be a string or a list of strings" in err["message"]


def test_a_batch_of_prompts_is_refused_not_cut_to_its_first(keyed):
    start, prompt = keyed
    s = start()
    code, err = post(s.url, {"model": "m", "prompt": [prompt, prompt], "max_tokens": 8})
    assert code == 400 and "list of 2 prompts" in err["message"]
    code, one = post(s.url, {"model": "m", "prompt": [prompt], "max_tokens": 64})
    assert code == 200 and "####" in one["choices"][0]["text"]


def test_non_streaming_mid_stream_error_is_an_http_500(keyed):
    start, prompt = keyed
    s = start("--midstream-error-rate", "1")
    code, err = post(s.url, {"model": "m", "prompt": prompt, "max_tokens": 64})
    assert code == 500 and err["object"] == "error" and "mid-stream" in err["message"]
