"""``infersweep agentic traces`` and ``infersweep agentic tokenizer``.

``traces generate|check|source|fetch``: a synthetic corpus, a corpus checked before any GPU
is allocated (statistics and the theoretical prefix-cache hit rate), which corpus a row
replays, and that corpus downloaded at its revision. ``tokenizer layout|words``: a tokenizer
the replay client loads offline, and the word-level one that counts as the simulator does.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import click

from infersweep import output, progress
from infersweep.agentic import sources, tracegen
from infersweep.agentic import tokenizer as tok
from infersweep.agentic.traces import load_corpus
from infersweep.agentic.tracestats import corpus_stats
from infersweep.pins.lock import LOCK_PATH


class RangeType(click.ParamType):
    """``N`` or ``N-M``."""

    def __init__(self, integer: bool = True):
        self.integer = integer
        self.name = "N[-M]" if integer else "S[-S]"

    def convert(self, value, param, ctx):
        if isinstance(value, tuple):
            return value
        try:
            return tracegen.parse_range(value, integer=self.integer)
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


@contextmanager
def _status(text: str) -> Iterator[None]:
    """A spinner on a terminal; nothing in a log (these steps take seconds)."""
    status = progress.StatusLines()
    if status.tty:
        status.status(text)
    try:
        yield
    finally:
        status.close()


def _range_text(r) -> str:
    return f"{r[0]:g}" if r[0] == r[1] else f"{r[0]:g}-{r[1]:g}"


@click.group()
def traces():
    """Weka trace corpora: generate, check, and the corpus a row replays."""


_D = tracegen.GenParams()


@traces.command()
@click.option("--out", required=True, type=click.Path(path_type=Path),
              help="Directory to write (one trace-NNNN.json per trace).")
@click.option("--traces", "n_traces", type=click.IntRange(1), default=_D.traces,
              show_default=True, help="Number of traces (agent sessions).")
@click.option("--turns", type=RangeType(), default=_range_text(_D.turns), show_default=True,
              help="Main-agent calls per trace.")
@click.option("--seed", type=int, default=_D.seed, show_default=True,
              help="Same seed and options: byte-identical corpus.")
@click.option("--first-context", type=RangeType(), default=_range_text(_D.first_context),
              show_default=True, help="Input tokens of a trace's first call.")
@click.option("--system-tokens", type=click.IntRange(0), default=_D.system_tokens,
              show_default=True, help="System/tool prefix every call of a trace starts with.")
@click.option("--context-growth", type=RangeType(), default=_range_text(_D.context_growth),
              show_default=True, help="New user/tool tokens a turn adds (besides the answer).")
@click.option("--output-tokens", type=RangeType(), default=_range_text(_D.output_tokens),
              show_default=True, help="Output tokens of a call (log-uniform).")
@click.option("--think-time", type=RangeType(integer=False),
              default=_range_text(_D.think_time), show_default=True,
              help="Seconds between a call's end and the next call.")
@click.option("--subagents", type=click.FloatRange(0, 1), default=_D.subagents,
              show_default=True, help="Chance that a turn spawns a subagent.")
@click.option("--subagent-turns", type=RangeType(), default=_range_text(_D.subagent_turns),
              show_default=True, help="Calls of a subagent.")
@click.option("--max-context", type=click.IntRange(1), default=_D.max_context,
              show_default=True, help="Compact the context (keep the prefix) beyond this.")
@click.option("--block-size", type=click.IntRange(1), default=_D.block_size,
              show_default=True, help="Tokens per hash block.")
@click.option("--model", default=_D.model, show_default=True, help="Model named in the trace.")
@click.option("--force", is_flag=True, help="Replace --out if it exists.")
@progress.option()
def generate(out, n_traces, turns, seed, first_context, system_tokens, context_growth,
             output_tokens, think_time, subagents, subagent_turns, max_context, block_size,
             model, force, no_progress):
    """Write a seeded synthetic corpus the replay client accepts."""
    params = tracegen.GenParams(
        traces=n_traces, turns=turns, seed=seed, block_size=block_size,
        first_context=first_context, system_tokens=system_tokens,
        context_growth=context_growth, output_tokens=output_tokens, think_time=think_time,
        subagents=subagents, subagent_turns=subagent_turns, max_context=max_context,
        model=model)
    with progress.bar(n_traces, "traces", enabled=not no_progress) as bar:
        tracegen.write_corpus(params, out, force=force, progress=bar.update)
    _print_stats(load_corpus(out))
    click.echo(f"wrote {n_traces} traces to {out}")


def _print_stats(corpus) -> None:
    s = corpus_stats(corpus)
    rows = [("traces", s.traces), ("requests", s.requests), ("main-agent turns", s.turns),
            ("subagents", s.subagents), ("subagent requests", s.subagent_requests),
            ("input tokens", s.input_tokens), ("max input tokens", s.max_input_tokens),
            ("output tokens", s.output_tokens),
            ("theoretical prefix-cache hit", f"{100 * s.hit_rate:.2f} % "
                                             f"({s.hit_blocks}/{s.total_blocks} blocks)")]
    for name, value in rows:
        click.echo(f"{name + ':':<31}{value}")


@traces.command()
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the statistics as JSON.")
@output.output_format_option
def check(path, as_json):
    """Check a corpus (directory of *.json, one trace file, or traces.jsonl) as the replay
    client will read it; print its statistics. Exit 1 listing every error."""
    with _status(f"reading {path}"):
        corpus = load_corpus(path)
    if corpus.warnings:
        output.warn(corpus.warnings)
    if as_json:
        s = corpus_stats(corpus)
        click.echo(json.dumps({**s.__dict__, "hit_rate": s.hit_rate}, indent=2))
    else:
        _print_stats(corpus)


def _lock_option(f):
    return click.option("--lock", type=click.Path(path_type=Path), default=LOCK_PATH,
                        show_default=True, help="The file with the trace-datasets block.")(f)


@traces.command()
@click.option("--model-prefix", required=True, help="The row's model-prefix.")
@click.option("--override", default=None, help="An alias to replay instead "
                                               "(InferenceX's WEKA_LOADER_OVERRIDE).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@_lock_option
def source(model_prefix, override, as_json, lock):
    """The corpus a row replays: alias, dataset and revision."""
    src = sources.resolve_source({"model-prefix": model_prefix}, override,
                                 datasets=sources.load_trace_datasets(lock))
    if as_json:
        click.echo(json.dumps(src.__dict__, indent=2))
        return
    click.echo(f"alias:    {src.alias}\ndataset:  {src.dataset}\nrevision: {src.revision}")
    if src.commit:
        click.echo(f"commit:   {src.commit}")
    click.echo(f"why:      {src.reason}")


@traces.command()
@click.option("--model-prefix", default=None, help="The row's model-prefix.")
@click.option("--override", default=None, help="An alias to fetch instead.")
@click.option("--cache-dir", required=True, type=click.Path(path_type=Path),
              help="HF hub cache to download into (the replay's HF_HUB_CACHE).")
@click.option("--client-venv", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="The replay client's venv (its Python has huggingface_hub).")
@click.option("--endpoint", default=None, help="Hub endpoint (default: HF_ENDPOINT or the "
                                               "public Hub).")
@_lock_option
def fetch(model_prefix, override, cache_dir, client_venv, endpoint, lock):
    """Download the corpus a row replays at its revision."""
    if not (model_prefix or override):
        raise click.UsageError("give --model-prefix or --override")
    src = sources.resolve_source({"model-prefix": model_prefix}, override,
                                 datasets=sources.load_trace_datasets(lock))
    python = client_venv / "bin" / "python" if client_venv else None
    with _status(f"downloading {src.dataset}@{src.revision}"):
        got = sources.fetch(src, cache_dir, endpoint=endpoint, python=python)
    click.echo(f"{src.alias}: {src.dataset}@{got.commit} in {got.path}")


@click.group()
def tokenizer():
    """Tokenizers the replay client loads offline (HF_HUB_OFFLINE=1)."""


@tokenizer.command()
@click.argument("src", type=click.Path(path_type=Path))
@click.option("--hf-home", required=True, type=click.Path(path_type=Path),
              help="The replay's HF_HOME (the entry goes under its hub/).")
@click.option("--name", default=None, help="owner/name to load it by [default: local/<dir>].")
def layout(src, hf_home, name):
    """Lay the tokenizer at SRC (directory or tokenizer.json) out as an HF cache entry."""
    got = tok.layout_tokenizer(src, hf_home, name)
    click.echo(f"{got}\nuse: HF_HOME={hf_home} HF_HUB_OFFLINE=1 ... --tokenizer {got}")


@tokenizer.command()
@click.option("--client-venv", required=True, type=click.Path(path_type=Path, file_okay=False),
              help="The replay client's venv (its prompt corpora are read from it).")
@click.option("--out", required=True, type=click.Path(path_type=Path),
              help="Directory to write the tokenizer to.")
@click.option("--seed", "seeds", type=int, multiple=True, default=(42,), show_default=True,
              help="The replay's --random-seed (repeatable): the coding corpus depends on it.")
@click.option("--hf-home", type=click.Path(path_type=Path), default=None,
              help="Also lay it out in this HF_HOME.")
@click.option("--name", default="local/words", show_default=True,
              help="owner/name for --hf-home.")
def words(client_venv, out, seeds, hf_home, name):
    """A word-level tokenizer: one token per whitespace word, as the simulator counts."""
    with _status("reading the client's prompt corpora"):
        vocab = tok.client_corpus_words(client_venv / "bin" / "python", seeds)
    tok.write_word_tokenizer(out, vocab)
    click.echo(f"{out}: {len(vocab)} words")
    if hf_home:
        got = tok.layout_tokenizer(out, hf_home, name)
        click.echo(f"use: HF_HOME={hf_home} HF_HUB_OFFLINE=1 ... --tokenizer {got}")


def register(group: click.Group) -> None:
    """Put ``traces`` and ``tokenizer`` on the ``agentic`` group."""
    group.add_command(traces)
    group.add_command(tokenizer)
