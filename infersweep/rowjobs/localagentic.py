"""What an agentic job needs on this machine besides the simulator: traces, a tokenizer, the
pinned replay client.

On a cluster the replay reads the row's pinned corpus and the model's tokenizer. Here there is
no network, so a local job replays a folder of traces (``--traces DIR``, else a seeded
synthetic corpus made once per sweep) with a word-level tokenizer that counts tokens as the
simulator does, laid out so the client loads it offline. The recipe stays the same: these
reach the replay through its documented environment variables.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path

from infersweep.agentic.client import ROOT_ENV, VENV_ENV, ClientVenv, default_root, locate
from infersweep.agentic.replay import TOKENIZER_ENV, TRACES_ENV

CORPUS_SEED = 0


@dataclass
class AgenticLocal:
    """The local stand-ins for an agentic job, made once and shared by a sweep's jobs."""

    cache_dir: Path  # where the synthetic corpus and the tokenizer are made
    traces: Path | None = None  # a local folder of Weka traces (None: the synthetic corpus)
    client_venv: Path | None = None  # None: the default client venv
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _env: dict | None = field(default=None, repr=False)

    def client(self) -> ClientVenv:
        return locate(self.client_venv)

    def env(self) -> dict[str, str]:
        """The job's environment for its replay step (made on first use)."""
        with self._lock:
            if self._env is None:
                self._env = self._prepare()
            return dict(self._env)

    def _prepare(self) -> dict[str, str]:
        from infersweep.agentic import tokenizer as tokenizers
        from infersweep.agentic.traces import load_corpus

        client = self.client()  # before anything else: says how to install it when missing
        traces = self.traces
        if traces is None:
            traces = self.cache_dir / "traces"
            if not traces.is_dir():
                from infersweep.agentic.tracegen import GenParams, write_corpus

                write_corpus(GenParams(seed=CORPUS_SEED), traces)
        load_corpus(traces)  # a bad corpus is refused here, before any engine starts
        tok = self.cache_dir / "tokenizer"
        if not (tok / "tokenizer.json").is_file():
            words = tokenizers.client_corpus_words(client.python)
            tokenizers.write_word_tokenizer(tok, words)
        env = {TRACES_ENV: str(Path(traces).resolve()), TOKENIZER_ENV: str(tok.resolve()),
               VENV_ENV: str(client.path.resolve())}
        root = default_root()  # the pin the client was checked against, for the job's replay
        if root is not None:
            env[ROOT_ENV] = str(root.resolve())
        return env
