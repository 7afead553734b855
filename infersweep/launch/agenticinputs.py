"""An agentic row's inputs, ready before any GPU is allocated: the pinned replay client and
the traces the benchmark step will replay.

On a Slurm fleet the launcher fetches the row's corpus at its pinned revision into the Hub
cache the job reads (``HF_HUB_CACHE``, else ``HF_HOME/hub``, else ``~/.cache/huggingface/hub``),
with the client's own ``huggingface_hub``; a missing dataset or a revision that moved fails
here, in seconds, not inside the job. A local corpus (``$INFERSWEEP_AGENTIC_TRACES``) is
checked instead, so a malformed trace is refused at file:line:col before the job starts.
"""

from __future__ import annotations

from pathlib import Path

from infersweep.agentic.client import ClientVenv, locate
from infersweep.agentic.replay import TRACES_ENV

OVERRIDE_ENV = "INFERSWEEP_AGENTIC_TRACE_OVERRIDE"  # InferenceX's WEKA_LOADER_OVERRIDE


def hub_cache(environ: dict[str, str]) -> Path:
    if environ.get("HF_HUB_CACHE"):
        return Path(environ["HF_HUB_CACHE"])
    home = Path(environ["HF_HOME"]) if environ.get("HF_HOME") else (
        Path(environ.get("HOME") or Path.home()) / ".cache" / "huggingface")
    return home / "hub"


def ready(row: dict, environ: dict[str, str], say=print) -> ClientVenv:
    """The client, and the row's traces fetched (or the local corpus checked)."""
    from infersweep.agentic.sources import fetch, resolve_source
    from infersweep.agentic.traces import load_corpus

    client = locate(Path(environ["INFERSWEEP_AGENTIC_CLIENT_VENV"])
                    if environ.get("INFERSWEEP_AGENTIC_CLIENT_VENV") else None)
    local = environ.get(TRACES_ENV)
    if local:
        corpus = load_corpus(local)
        say(f"agentic traces: {len(corpus.traces)} local trace(s) in {local} checked")
        return client
    source = resolve_source(row, environ.get(OVERRIDE_ENV) or None)
    got = fetch(source, hub_cache(environ), endpoint=environ.get("HF_ENDPOINT") or None,
                python=client.python)
    say(f"agentic traces: {source.alias} = {source.dataset}@{source.revision} "
        f"({got.commit[:12] if got.commit else '?'}) in {got.path}")
    return client


def is_agentic(row: dict) -> bool:
    return row.get("scenario-type") == "agentic-coding"


__all__ = ["OVERRIDE_ENV", "hub_cache", "is_agentic", "ready"]
