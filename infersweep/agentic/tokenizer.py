"""Tokenizers the replay client can load offline, and one that counts as the simulator does.

The client always needs a tokenizer (it synthesises each prompt from the trace's hash ids by
cutting windows of token ids out of its prompt corpus and decoding them). With
``HF_HUB_OFFLINE=1`` it looks a tokenizer up in the HF cache only (``snapshot_download(name,
local_files_only=True)``), so a plain directory is refused. :func:`layout_tokenizer` lays
the files out as a cache entry, ``hub/models--<owner>--<name>/snapshots/<rev>/`` with
``refs/main``, so ``--tokenizer local/<name>`` loads with ``HF_HOME`` pointing there.

:func:`word_tokenizer_json` is a word-level tokenizer: one token per whitespace-separated
word, which is how the engine simulator counts (so the client's and the server's token
counts agree), decoding to the words joined by single spaces. Its vocabulary must cover the
text the client synthesises from, or every unknown word becomes the same ``[UNK]`` and
different blocks turn into the same text (a real prefix cache would then share what the
trace says is not shared). :func:`client_corpus_words` collects that text's words from the
client itself: its coding corpus (built from templates with the run's random seed; build
with the seed the replay uses and every word is covered) and its Shakespeare corpus.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path

from infersweep.atomic import OutputError, write_atomic
from infersweep.diagnostics import Diagnostic, InputError

UNK = "[UNK]"
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json",
                   "vocab.json", "merges.txt", "vocab.txt", "tokenizer.model", "config.json",
                   "added_tokens.json", "generation_config.json", "chat_template.jinja")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")


def _tokenizer_files(src: Path) -> dict[str, bytes]:
    if src.is_file():
        if src.name != "tokenizer.json":
            raise InputError(Diagnostic(str(src), 0, 0, "not a tokenizer.json",
                                        "give a tokenizer directory or its tokenizer.json",
                                        "tokenizer"))
        return {"tokenizer.json": src.read_bytes()}
    if not src.is_dir():
        raise InputError(Diagnostic(str(src), 0, 0, "no such file or directory",
                                    "give a tokenizer directory or its tokenizer.json",
                                    "tokenizer"))
    files = {n: (src / n).read_bytes() for n in TOKENIZER_FILES if (src / n).is_file()}
    if "tokenizer.json" not in files and "tokenizer_config.json" not in files:
        raise InputError(Diagnostic(str(src), 0, 0, "no tokenizer.json or "
                                                    "tokenizer_config.json here",
                                    "give the directory a tokenizer was saved to",
                                    "tokenizer"))
    return files


def layout_tokenizer(src: str | Path, hf_home: str | Path, name: str | None = None) -> str:
    """Lay the tokenizer at ``src`` out in ``hf_home``'s hub cache; the name to load it by.

    ``name`` defaults to ``local/<src's name>``. The snapshot's revision is a digest of the
    files, so laying the same tokenizer out twice changes nothing."""
    src = Path(src)
    name = name or f"local/{(src.parent if src.is_file() else src).name}"
    if not _NAME.match(name):
        raise InputError(Diagnostic("<name>", 0, 0, f"'{name}' is not owner/name",
                                    "e.g. local/words", "tokenizer"))
    files = _tokenizer_files(src)
    # A tokenizer-only repository has no config.json; transformers offline wants one.
    files.setdefault("config.json", b"{}\n")
    if "tokenizer_config.json" not in files:
        files["tokenizer_config.json"] = _tokenizer_config()
    digest = hashlib.sha1()
    for n in sorted(files):
        digest.update(n.encode() + b"\0" + hashlib.sha1(files[n]).digest())
    rev = digest.hexdigest()
    repo = Path(hf_home) / "hub" / f"models--{name.replace('/', '--')}"
    snapshot = repo / "snapshots" / rev
    if not snapshot.is_dir():
        tmp = repo / "snapshots" / f".{rev}.tmp-{os.getpid()}"
        try:
            shutil.rmtree(tmp, ignore_errors=True)
            tmp.mkdir(parents=True)
            for n, data in files.items():
                (tmp / n).write_bytes(data)
            os.replace(tmp, snapshot)
        except OSError as exc:
            raise OutputError.from_os_error(snapshot, exc, "tokenizer cache entry") from None
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    write_atomic(repo / "refs" / "main", rev, "tokenizer cache ref")
    return name


def _tokenizer_config() -> bytes:
    return json.dumps({"tokenizer_class": "PreTrainedTokenizerFast", "unk_token": UNK,
                       "model_max_length": 1 << 30, "clean_up_tokenization_spaces": False},
                      indent=2).encode() + b"\n"


def word_tokenizer_json(words: Iterable[str]) -> bytes:
    """A ``tokenizer.json``: one token per whitespace-separated word, ``[UNK]`` for others."""
    vocab = {UNK: 0}
    for w in sorted(set(words)):
        if w and not any(c.isspace() for c in w) and w not in vocab:
            vocab[w] = len(vocab)
    doc = {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [{"id": 0, "content": UNK, "single_word": False, "lstrip": False,
                          "rstrip": False, "normalized": False, "special": True}],
        "normalizer": None, "pre_tokenizer": {"type": "WhitespaceSplit"},
        "post_processor": None, "decoder": None,
        "model": {"type": "WordLevel", "vocab": vocab, "unk_token": UNK},
    }
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def write_word_tokenizer(out_dir: str | Path, words: Iterable[str]) -> Path:
    """A tokenizer directory (``tokenizer.json``, ``tokenizer_config.json``) at ``out_dir``."""
    out = Path(out_dir)
    write_atomic(out / "tokenizer.json", word_tokenizer_json(words), "tokenizer")
    write_atomic(out / "tokenizer_config.json", _tokenizer_config(), "tokenizer")
    return out


# Run under the replay client's Python: the words of the text it synthesises prompts from.
_WORDS_SCRIPT = r"""
import json, sys
from pathlib import Path
from aiperf.common import random_generator as rng
from aiperf.config.dataset.content import PromptConfig
from aiperf.dataset.generator import prompt
from aiperf.dataset.generator.coding_content import CodingContentGenerator
class Recorder:
    block_separation_token_id = None
    def __init__(self):
        self.texts = []
    def encode(self, text, **kwargs):
        self.texts.append(text)
        return [0]
words = set()
for seed in json.loads(sys.argv[1]):
    rng.reset()
    rng.init(seed)
    rec = Recorder()
    CodingContentGenerator(config=PromptConfig(), tokenizer=rec)
    for text in rec.texts:
        words.update(text.split())
sonnets = Path(prompt.__file__).parent / prompt.DEFAULT_CORPUS_FILE
words.update(sonnets.read_text(encoding="utf-8").split())
sys.stdout.write("\n".join(sorted(words)))
"""


def client_corpus_words(python: str | Path, seeds: Iterable[int] = (42,)) -> list[str]:
    """The words of the client's prompt corpora for ``seeds`` (runs under ``python``)."""
    proc = subprocess.run([str(python), "-c", _WORDS_SCRIPT, json.dumps(list(seeds))],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise InputError(Diagnostic(str(python), 0, 0, f"cannot read the client's prompt "
                                                       f"corpus: {tail}",
                                    "give the replay client's venv (it has aiperf)",
                                    "tokenizer"))
    return proc.stdout.split("\n")
