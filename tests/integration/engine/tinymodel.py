"""A tiny randomly initialised Llama and its tokenizer, built offline for `transformers serve`
(facts in ../shared/specs/real-engine-local.md).

The vocabulary is the special tokens and the words ``w0`` ... ``w7995`` (a WordLevel
tokenizer over whitespace, so one word is one token both ways). The ``lm_head`` rows of the
special tokens are zero: every word's logit beats them, greedy decoding never emits EOS, and
every request runs to its ``max_tokens`` (the engine refuses ``ignore_eos``). Run as a script
(``python -m tests.integration.engine.tinymodel DIR``) so that torch stays out of the test
process.
"""

from __future__ import annotations

import sys
from pathlib import Path

VOCAB = 8000
SPECIAL = ["[UNK]", "[BOS]", "[EOS]", "[PAD]"]
# 4 layers, hidden 512: 20.8 M parameters, bf16 (about 76 output tokens/s on one CPU core)
SHAPE = dict(hidden_size=512, intermediate_size=1536, num_hidden_layers=4,
             num_attention_heads=8, num_key_value_heads=4, max_position_embeddings=2048)
CHAT_TEMPLATE = "{% for m in messages %}{{ m['content'] }} {% endfor %}"


def build(out: Path) -> Path:
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import (
        GenerationConfig,
        LlamaConfig,
        LlamaForCausalLM,
        PreTrainedTokenizerFast,
    )

    vocab = {tok: i for i, tok in enumerate(SPECIAL)}
    vocab.update((f"w{k}", len(SPECIAL) + k) for k in range(VOCAB - len(SPECIAL)))
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.decoder = decoders.WordPiece()  # joins words with spaces
    tok.add_special_tokens(SPECIAL)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", bos_token="[BOS]",
                                   eos_token="[EOS]", pad_token="[PAD]")
    fast.chat_template = CHAT_TEMPLATE
    fast.save_pretrained(out)

    ids = {name: SPECIAL.index(f"[{name.upper()}]") for name in ("bos", "eos", "pad")}
    config = LlamaConfig(vocab_size=VOCAB, bos_token_id=ids["bos"], eos_token_id=ids["eos"],
                         pad_token_id=ids["pad"], dtype="bfloat16", **SHAPE)
    torch.manual_seed(0)
    model = LlamaForCausalLM(config).to(torch.bfloat16)
    with torch.no_grad():
        model.lm_head.weight[: len(SPECIAL)] = 0
    model.generation_config = GenerationConfig(bos_token_id=ids["bos"],
                                               eos_token_id=ids["eos"],
                                               pad_token_id=ids["pad"], do_sample=False)
    model.save_pretrained(out)
    return out


if __name__ == "__main__":
    build(Path(sys.argv[1]))
