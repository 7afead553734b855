"""``infersweep bench``: the serving benchmark client (InferenceX benchmark_serving.py flags)."""

from __future__ import annotations

import sys

import click

from infersweep import progress
from infersweep.bench import options, seeds
from infersweep.clitypes import (
    NON_NEGATIVE_INT,
    POSITIVE_INT,
    FiniteFloat,
    fraction,
    positive_float,
)

BACKENDS = ["openai", "openai-chat", "vllm", "sglang", "lmdeploy", "scalellm"]
# Upper bounds that keep a typo from exhausting memory or forking without end.
MAX_LEN = click.IntRange(1, 1 << 24)            # tokens per prompt or output
MAX_PROMPTS = click.IntRange(1, 10_000_000)
MAX_WORKERS = click.IntRange(0, 1024)
SERVER_PORT = click.IntRange(1, 65535)  # a client connects to a real port, never 0
# timeouts: finite (a wait that never ends is a hang) and at most 30 days
TIMEOUT = FiniteFloat(min=0, min_open=True, max=30 * 86400)


def _parsed(parse):
    """A click callback that runs one of ``options``' parsers at parse time."""

    def callback(ctx, param, value):
        if value is None:
            return value
        try:
            parse(value)
        except ValueError as exc:
            raise click.BadParameter(str(exc), ctx=ctx, param=param) from None
        return value

    return callback


@click.group()
def bench():
    """Benchmark an OpenAI-compatible streaming server."""


@bench.command("serve")
@click.option("--backend", type=click.Choice(BACKENDS), default="openai", show_default=True,
              help="openai-chat uses /v1/chat/completions; the rest use /v1/completions.")
@click.option("--base-url", default=None, callback=_parsed(options.base_url),
              help="e.g. http://127.0.0.1:8000 or https://host (OPENAI_API_KEY, if set, is "
                   "sent as a bearer token).")
@click.option("--ca-cert", type=click.Path(dir_okay=False), default=None,
              help="https: PEM file of the CA(s) to trust instead of the system store "
                   "(SSL_CERT_FILE works too).")
@click.option("--insecure", is_flag=True,
              help="https: skip certificate and host name verification.")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", type=SERVER_PORT, default=8000, show_default=True)
@click.option("--endpoint", default=None, callback=_parsed(options.endpoint),
              help="[/v1/completions or /v1/chat/completions]")
@click.option("--model", required=True)
@click.option("--served-model-name", default=None)
@click.option("--tokenizer", default=None,
              help="Local tokenizer path; anything else selects the tokenizer-free mode.")
@click.option("--tokenizer-mode", default="auto", hidden=True)
@click.option("--trust-remote-code", is_flag=True)
@click.option("--prompt-format", type=click.Choice(["auto", "token-ids", "text"]), default="auto",
              show_default=True)
@click.option("--vocab-size", type=POSITIVE_INT, default=32000, show_default=True,
              help="Token-id range in the tokenizer-free mode.")
@click.option("--dataset-name", type=click.Choice(["random"]), default="random", show_default=True)
@click.option("--random-input-len", type=MAX_LEN, default=1024, show_default=True)
@click.option("--random-output-len", type=MAX_LEN, default=128, show_default=True)
@click.option("--random-range-ratio", type=FiniteFloat(min=0, min_open=True, max=1), default=1.0, show_default=True,
              help="Lengths uniform in [floor(r*L), L] (InferenceX's meaning).")
@click.option("--num-prompts", type=MAX_PROMPTS, default=1000, show_default=True)
@click.option("--num-warmups", type=NON_NEGATIVE_INT, default=0, show_default=True,
              help="Requests sent before the measured window starts (not counted).")
@click.option("--max-concurrency", type=POSITIVE_INT, default=None)
@click.option("--request-rate", type=positive_float(allow_inf=True), default="inf",
              show_default=True, metavar="FLOAT|inf",
              help="Requests/s (gamma/Poisson arrivals) or inf.")
@click.option("--burstiness", type=positive_float(), default=1.0, show_default=True)
@click.option("--ignore-eos", is_flag=True)
@click.option("--continuous-usage/--no-continuous-usage", default=True, show_default=True,
              help="Ask for usage in every chunk (per-token ITL for multi-token chunks).")
@click.option("--percentile-metrics", default="ttft,tpot,itl,e2el", show_default=True,
              callback=_parsed(options.percentile_metrics))
@click.option("--metric-percentiles", default="90,99,99.9", show_default=True,
              callback=_parsed(options.metric_percentiles))
@click.option("--goodput", multiple=True, callback=_parsed(options.goodput),
              help="SLO as KEY:ms (ttft, tpot, e2el).")
@click.option("--save-result", is_flag=True)
@click.option("--save-detailed", is_flag=True)
@click.option("--save-records/--no-save-records", default=True, show_default=True,
              help="Write <result>.records.jsonl next to the result.")
@click.option("--result-dir", default=None)
@click.option("--result-filename", default=None)
@click.option("--metadata", multiple=True, callback=_parsed(options.metadata),
              help="KEY=VALUE added to the result.")
@click.option("--seed", type=NON_NEGATIVE_INT, default=None,
              help="The prompts' seed; the same seed sends the same prompts. Default: a fresh "
                   "seed derived from --run-id and the point (recorded in the result).")
@click.option("--run-id", default=None, envvar=seeds.RUN_ID_ENV, show_envvar=True,
              help="The run this point belongs to; without --seed the prompts' seed comes from "
                   "it and the point [default: random, so every run sends new prompts].")
@click.option("--extra-body", default=None, metavar="JSON", callback=_parsed(options.extra_body),
              help="A JSON object merged into every request (engine-specific fields, e.g. "
                   "'{\"top_k\": 1}').")
@click.option("--num-workers", type=MAX_WORKERS, default=0, show_default=True,
              help="Client processes (0 = auto: one per 1,024 streams, up to the usable cores).")
@click.option("--request-timeout", type=TIMEOUT, default=21600.0, show_default=True)
@click.option("--idle-timeout", type=TIMEOUT, default=600.0, show_default=True,
              help="Fail a request after this many seconds without a byte.")
@click.option("--ready-timeout", type=TIMEOUT, default=60.0, show_default=True)
@click.option("--probe/--no-probe", default=True, show_default=True)
@click.option("--max-failed-fraction", type=fraction(), default=0.05, show_default=True)
@progress.option("--disable-tqdm")
@click.option("--timestamp-source", type=click.Choice(["auto", "kernel", "user"]), default="auto",
              show_default=True,
              help="Chunk arrival times: the kernel's receive timestamps (Linux), or the "
                   "client's clock after each read (user). auto = kernel where available.")
@click.option("--random-num-workers", type=NON_NEGATIVE_INT, default=0, hidden=True)
def serve(**kw):
    """Run a serving benchmark (closed loop with --max-concurrency, or open loop at a rate)."""
    from infersweep.bench.runner import BenchArgs, run

    base = kw.pop("base_url")
    if base is None:
        base = f"http://{kw['host']}:{kw['port']}"
        _parsed(options.base_url)(click.get_current_context(), _param("host"), base)
    if kw["endpoint"] is None:
        kw["endpoint"] = "/v1/chat/completions" if kw["backend"] == "openai-chat" else "/v1/completions"
    for k in ("host", "port", "tokenizer_mode", "dataset_name", "random_num_workers"):
        kw.pop(k)
    kw["prompt_format"] = {"token-ids": "ids"}.get(kw["prompt_format"], kw["prompt_format"])
    kw["goodput"] = list(kw["goodput"])
    kw["metadata"] = list(kw["metadata"])
    code = run(BenchArgs(base_url=base, **kw))
    if code:
        sys.exit(code)


def _param(name: str) -> click.Parameter:
    return next(p for p in click.get_current_context().command.params if p.name == name)


@bench.command("recompute")
@click.argument("records", type=click.Path(exists=True, dir_okay=False))
def recompute_cmd(records):
    """Recompute the summary metrics from a per-request records file."""
    from infersweep.bench import runtime
    from infersweep.bench.runner import recompute

    click.echo(runtime.dumps_indented(recompute(records)).decode())


@bench.command("bundle")
@click.option("--output", "-o", required=True, type=click.Path(dir_okay=False, writable=True),
              help="Where to write the bundle, e.g. build/infersweep-bench.pyz (its sha256 goes "
                   "to the same name plus .sha256).")
def bundle_cmd(output):
    """Build the client as one file that a bare Python >= 3.10 runs (`python3 FILE serve ...`).

    For the benchmark step inside an engine's container: only `serve` and `recompute`, with
    click inside and stdlib fallbacks for orjson, uvloop, numpy and rich. The same sources
    give the same bytes; the sha256 printed here is what a result it measures records.
    """
    from pathlib import Path

    from infersweep.bench.bundle import build

    made = build(Path(output))
    click.echo(f"{made.path}: {made.size} bytes, {made.files} files, sha256 {made.sha256}")
