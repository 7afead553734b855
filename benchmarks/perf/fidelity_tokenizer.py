"""Write an offline word-level tokenizer for peer clients (no hub download).

Run it with a Python that has ``tokenizers`` (e.g. the peers' virtualenv):
    python benchmarks/perf/fidelity_tokenizer.py OUT_DIR
Words split on whitespace, so its counts equal the simulator's.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main(out: str, vocab: int = 8000) -> None:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    words = {"<unk>": 0, "<s>": 1, "</s>": 2}
    for k in range(vocab):
        words[f"w{k}"] = len(words)
    tok = Tokenizer(models.WordLevel(words, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.decoder = decoders.WordPiece(prefix="##")  # joins words with spaces
    d = Path(out)
    d.mkdir(parents=True, exist_ok=True)
    tok.save(str(d / "tokenizer.json"))
    (d / "tokenizer_config.json").write_text(json.dumps({
        "tokenizer_class": "PreTrainedTokenizerFast", "unk_token": "<unk>", "bos_token": "<s>",
        "eos_token": "</s>", "model_max_length": 1000000}))
    (d / "config.json").write_text(json.dumps({"model_type": "llama", "vocab_size": len(words)}))


if __name__ == "__main__":
    main(sys.argv[1])
