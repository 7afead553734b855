from __future__ import annotations

import pytest

from infersweep.sim.server import cut_at_stop, prompt_of, stop_strings


def test_stop_strings_accepts_the_openai_forms():
    assert stop_strings(None) == [] and stop_strings("") == []
    assert stop_strings("Q:") == ["Q:"] and stop_strings(["a", "", "b"]) == ["a", "b"]
    with pytest.raises(ValueError):
        stop_strings(["a", 1])


def test_cut_at_stop_ends_before_the_earliest_stop_string():
    words = ["The", "result", "is", "7.\n####", "7"]
    assert " ".join(cut_at_stop(words, ["####"])) == "The result is 7."
    assert " ".join(cut_at_stop(words, ["#### 7", "result"])) == "The"
    assert cut_at_stop(words, ["Question:"]) == words
    assert cut_at_stop(words, ["The"]) == [""]


def test_a_batch_of_prompts_is_refused_and_a_list_of_one_is_its_prompt():
    assert prompt_of({"prompt": ["a b"]}, chat=False) == ("a b", 2)
    with pytest.raises(ValueError, match="list of 2 prompts"):
        prompt_of({"prompt": ["a", "b"]}, chat=False)
