"""Optional local tokenizer (no downloads): a directory or file holding ``tokenizer.json``.

Uses the ``tokenizers`` package, or ``transformers`` when that is what is installed. A name
that is not a local path selects the tokenizer-free mode instead (see ``commands``).
"""

from __future__ import annotations

import os

from infersweep.bench import seeded
from infersweep.diagnostics import Diagnostic, InputError


class LocalTokenizer:
    def __init__(self, path: str, trust_remote_code: bool = False):
        self.path = path
        self._tok = None
        self._hf = None
        file = os.path.join(path, "tokenizer.json") if os.path.isdir(path) else path
        try:
            from tokenizers import Tokenizer  # type: ignore
        except ImportError:
            Tokenizer = None
        if Tokenizer is not None and os.path.isfile(file):
            try:
                self._tok = Tokenizer.from_file(file)
            except Exception as exc:  # noqa: BLE001 - the library raises a bare Exception
                raise InputError(Diagnostic(
                    file, 0, 0, f"--tokenizer: not a readable tokenizer.json ({_first_line(exc)})",
                    "point --tokenizer at a Hugging Face tokenizer.json or the folder holding "
                    "one, or omit it for the tokenizer-free mode")) from exc
            return
        try:
            from transformers import AutoTokenizer  # type: ignore
        except ImportError as exc:
            if Tokenizer is None:
                raise InputError(
                    f"--tokenizer {path}: a local tokenizer needs the 'tokenizers' or "
                    "'transformers' package (pip install tokenizers), or omit --tokenizer "
                    "for the tokenizer-free mode") from exc
            raise InputError(Diagnostic(
                path, 0, 0, "--tokenizer: no tokenizer.json here",
                "a local tokenizer is a tokenizer.json file or a folder that holds one (other "
                "formats need the 'transformers' package); omit --tokenizer for the "
                "tokenizer-free mode")) from exc
        try:
            self._hf = AutoTokenizer.from_pretrained(
                path, trust_remote_code=trust_remote_code, local_files_only=True)
        except Exception as exc:  # noqa: BLE001 - many loader errors, one message
            if not os.path.isfile(file):  # no tokenizer.json, nor another format it reads
                raise InputError(Diagnostic(
                    path, 0, 0, "--tokenizer: no tokenizer.json here",
                    "a local tokenizer is a tokenizer.json file or a folder that holds one, or "
                    f"a folder transformers can load (it says: {_first_line(exc)}); omit "
                    "--tokenizer for the tokenizer-free mode")) from exc
            raise InputError(f"--tokenizer {path}: cannot load a tokenizer: "
                             f"{_first_line(exc)}") from exc

    @property
    def vocab_size(self) -> int:
        if self._tok is not None:
            return self._tok.get_vocab_size(with_added_tokens=False)
        return int(self._hf.vocab_size)

    def encode(self, text: str) -> list[int]:
        if self._tok is not None:
            return self._tok.encode(text, add_special_tokens=False).ids
        return self._hf.encode(text, add_special_tokens=False)

    def decode(self, ids) -> str:
        ids = [int(x) for x in ids]
        if self._tok is not None:
            return self._tok.decode(ids)
        return self._hf.decode(ids)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:200] if text else type(exc).__name__


def is_local(name: str | None) -> bool:
    return bool(name) and os.path.exists(name)


def render_texts(tok: LocalTokenizer, plan, seed: int) -> tuple[list[str], list[int]]:
    """Decode each request's id ramp to text and fix the token count after the round trip."""
    from infersweep.bench.dataset import token_ids

    texts, lens = [], []
    vocab = tok.vocab_size
    for i in range(len(plan)):
        target = int(plan.input_lens[i])
        ids = [int(k) % vocab for k in token_ids(plan, i)]
        rng = seeded.Generator([seed, 5, i])  # numpy's default_rng stream, numpy or not
        text = tok.decode(ids)
        for _ in range(10):
            enc = tok.encode(text)
            if len(enc) == target:
                break
            if len(enc) > target:
                enc = enc[:target]
            else:
                enc = enc + rng.integers(0, vocab, target - len(enc))
            text = tok.decode(enc)
        texts.append(text)
        lens.append(len(tok.encode(text)))
    return texts, lens
