"""Write an offline word-level tokenizer for peer clients (no hub download).

Run it with a Python that has ``tokenizers`` (e.g. the peers' virtualenv):
    python benchmarks/perf/fidelity_tokenizer.py OUT_DIR
Words split on whitespace, so its counts equal the simulator's.

OUT_DIR gets the tokenizer files (``AutoTokenizer.from_pretrained(OUT_DIR)`` loads them; guidellm
takes the directory). OUT_DIR/hub gets the same files as a Hugging Face hub cache entry for the
repository id ``HUB_ID``. aiperf 0.13 needs that form: with ``HF_HUB_OFFLINE=1`` (which its
dataset workers force on themselves) it resolves every tokenizer name through
``snapshot_download(name, local_files_only=True)``, which rejects a directory path as a repo id.
Point ``HF_HUB_CACHE`` at OUT_DIR/hub and pass ``--tokenizer HUB_ID``.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

HUB_ID = "infersweep/fidelity-wordlevel"
_REV = "0" * 40  # the snapshot's (fake) commit hash; refs/main points at it
FILES = ("tokenizer.json", "tokenizer_config.json", "config.json")


def hub_snapshot(out: Path) -> Path:
    return out / "hub" / f"models--{HUB_ID.replace('/', '--')}" / "snapshots" / _REV


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
    # "<unk>" is deliberately not declared as the special unk_token: every word outside the
    # vocabulary (all of guidellm's faker text) maps to it, and guidellm decodes its synthetic
    # prompts with skip_special_tokens=True. A special unk made those prompts empty strings,
    # and guidellm then failed every request before sending it.
    (d / "tokenizer_config.json").write_text(json.dumps({
        "tokenizer_class": "PreTrainedTokenizerFast", "bos_token": "<s>", "eos_token": "</s>",
        "model_max_length": 1000000}))
    (d / "config.json").write_text(json.dumps({"model_type": "llama", "vocab_size": len(words)}))
    snap = hub_snapshot(d)
    snap.mkdir(parents=True, exist_ok=True)
    for f in FILES:
        shutil.copyfile(d / f, snap / f)
    refs = snap.parents[1] / "refs"
    refs.mkdir(exist_ok=True)
    (refs / "main").write_text(_REV)


if __name__ == "__main__":
    main(sys.argv[1])
