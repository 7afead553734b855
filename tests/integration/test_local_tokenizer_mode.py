"""The client's local-tokenizer mode: text prompts built from a tokenizer on disk (no hub),
each with exactly the requested number of tokens, reproducible from the seed."""

from __future__ import annotations

import json

import pytest

from tests.integration.simharness import FAST, bench

pytestmark = pytest.mark.integration
tokenizers = pytest.importorskip("tokenizers")


@pytest.fixture
def word_tokenizer(tmp_path):
    """A word-level tokenizer whose token count is the whitespace word count."""
    vocab = {"<unk>": 0, **{f"w{k}": k + 1 for k in range(2000)}}
    tok = tokenizers.Tokenizer(tokenizers.models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = tokenizers.pre_tokenizers.WhitespaceSplit()
    tok.decoder = tokenizers.decoders.WordPiece(prefix="##")
    path = tmp_path / "tok"
    path.mkdir()
    tok.save(str(path / "tokenizer.json"))
    return path


def test_prompts_have_exact_token_counts_and_repeat_with_the_seed(word_tokenizer, sim,
                                                                  tmp_path):
    from infersweep.bench import dataset
    from infersweep.bench.tokenizer import LocalTokenizer, render_texts

    tok = LocalTokenizer(str(word_tokenizer))
    assert tok.vocab_size == 2001
    plan = dataset.make_plan(20, input_len=64, output_len=8, ratio=0.5, seed=7,
                             vocab=tok.vocab_size)
    texts, lens = render_texts(tok, plan, seed=7)
    assert lens == [int(n) for n in plan.input_lens]
    assert [len(t.split()) for t in texts] == lens
    assert render_texts(tok, plan, seed=7)[0] == texts

    server = sim(*FAST)
    proc, result = bench(server.url, tmp_path, "--tokenizer", str(word_tokenizer),
                         "--num-prompts", "20", "--max-concurrency", "4", "--seed", "7")
    assert proc.returncode == 0, proc.stderr
    assert result["completed"] == 20
    assert result["tokenizer_id"] == str(word_tokenizer)
    assert all(32 <= n <= 64 for n in result["input_lens"])


def test_missing_tokenizer_file_is_a_clear_error(tmp_path, sim):
    empty = tmp_path / "empty"
    empty.mkdir()
    server = sim(*FAST)
    proc, result = bench(server.url, tmp_path, "--tokenizer", str(empty), "--num-prompts", "2")
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
    assert "tokenizer" in proc.stderr.lower()
    assert json.dumps(result) == "null"
