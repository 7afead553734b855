"""Tokenizers laid out as HF cache entries, and the word-level tokenizer's counts."""

from __future__ import annotations

import json

import pytest

from infersweep.agentic.tokenizer import (
    layout_tokenizer,
    word_tokenizer_json,
    write_word_tokenizer,
)
from infersweep.diagnostics import InputError


def test_layout_makes_a_cache_entry_with_refs_main(tmp_path):
    src = write_word_tokenizer(tmp_path / "words", ["a", "b"])
    name = layout_tokenizer(src, tmp_path / "hf")
    assert name == "local/words"
    repo = tmp_path / "hf" / "hub" / "models--local--words"
    rev = (repo / "refs" / "main").read_text()
    snap = repo / "snapshots" / rev
    assert len(rev) == 40
    assert sorted(p.name for p in snap.iterdir()) == ["config.json", "tokenizer.json",
                                                       "tokenizer_config.json"]
    assert (snap / "tokenizer.json").read_bytes() == (src / "tokenizer.json").read_bytes()


def test_layout_is_content_addressed(tmp_path):
    a = write_word_tokenizer(tmp_path / "a", ["x"])
    b = write_word_tokenizer(tmp_path / "b", ["y"])
    layout_tokenizer(a, tmp_path / "hf", "local/t")
    first = (tmp_path / "hf/hub/models--local--t/refs/main").read_text()
    layout_tokenizer(a, tmp_path / "hf", "local/t")
    assert (tmp_path / "hf/hub/models--local--t/refs/main").read_text() == first
    layout_tokenizer(b, tmp_path / "hf", "local/t")
    assert (tmp_path / "hf/hub/models--local--t/refs/main").read_text() != first


def test_a_bare_tokenizer_json_gets_a_config(tmp_path):
    f = tmp_path / "tok" / "tokenizer.json"
    f.parent.mkdir()
    f.write_bytes(word_tokenizer_json(["a"]))
    layout_tokenizer(f, tmp_path / "hf", "local/bare")
    snap = next((tmp_path / "hf/hub/models--local--bare/snapshots").iterdir())
    cfg = json.loads((snap / "tokenizer_config.json").read_text())
    assert cfg["tokenizer_class"] == "PreTrainedTokenizerFast"


@pytest.mark.parametrize("name", ["words", "a/b/c", "/x"])
def test_a_name_must_be_owner_slash_name(tmp_path, name):
    src = write_word_tokenizer(tmp_path / "w", ["a"])
    with pytest.raises(InputError, match="is not owner/name"):
        layout_tokenizer(src, tmp_path / "hf", name)


def test_a_directory_without_a_tokenizer_is_refused(tmp_path):
    with pytest.raises(InputError, match="no tokenizer.json"):
        layout_tokenizer(tmp_path, tmp_path / "hf")


def test_one_token_per_whitespace_word_and_unknown_words_are_unk():
    tokenizers = pytest.importorskip("tokenizers")
    tk = tokenizers.Tokenizer.from_str(word_tokenizer_json(
        ["def", "foo(x):", "return", "x", "+", "1"]).decode())
    text = "def foo(x):\n    return  x + 1 zzz"
    enc = tk.encode(text)
    assert len(enc.ids) == len(text.split()) == 7
    assert enc.tokens[-1] == "[UNK]" and enc.ids.count(0) == 1
    decoded = tk.decode(enc.ids[:-1])
    assert decoded == "def foo(x): return x + 1"
    assert len(tk.encode(decoded).ids) == len(decoded.split())
