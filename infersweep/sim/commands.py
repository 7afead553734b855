"""``infersweep sim``: the engine simulator (serve one role, a router, or a whole topology)."""

from __future__ import annotations

import click

from infersweep.clitypes import (
    NON_NEGATIVE_INT,
    PORT,
    POSITIVE_INT,
    fraction,
    non_negative_float,
    positive_float,
)

LOOPBACK = ("127.0.0.1", "localhost", "::1")


def _loopback(ctx, param, value):
    if value not in LOOPBACK:
        raise click.BadParameter("the simulator binds loopback addresses only (127.0.0.1)")
    return value


def model_options(f):
    opts = [
        click.option("--served-model-name", "served_model_name", multiple=True,
                     default=("infersweep-sim",), show_default=True,
                     help="Model name(s) accepted in requests (others get HTTP 404)."),
        click.option("--max-model-len", type=POSITIVE_INT, default=16384, show_default=True,
                     help="Context limit: prompt + max tokens above it gets HTTP 400."),
        click.option("--max-num-batched-tokens", type=POSITIVE_INT, default=8192, show_default=True,
                     help="Token budget of one step (decode tokens first, then prefill chunks); "
                          "per DP rank."),
        click.option("--dp-size", type=POSITIVE_INT, default=1, show_default=True,
                     help="Data-parallel ranks in this server: independent schedulers, each "
                          "with its own --max-num-seqs and --max-num-batched-tokens (per rank, "
                          "as vLLM, ATOM and TRT-LLM count them; SGLang's DP-attention totals "
                          "divide by the ranks). A request goes to the least-loaded rank."),
        click.option("--prefill-tps", type=positive_float(), default=40000.0, show_default=True,
                     help="Prefill speed, prompt tokens per second."),
        click.option("--decode-base-ms", type=non_negative_float(), default=12.0, show_default=True),
        click.option("--decode-per-seq-ms", type=non_negative_float(), default=0.02, show_default=True,
                     help="Decode step time grows by this much per running sequence."),
        click.option("--stream-interval", type=POSITIVE_INT, default=1, show_default=True,
                     help="Tokens per SSE chunk (models multi-token steps such as MTP)."),
        click.option("--fixed-ttft-ms", type=non_negative_float(), default=None,
                     help="Ground-truth mode: fixed TTFT (with --fixed-itl-ms)."),
        click.option("--fixed-itl-ms", type=positive_float(), default=None,
                     help="Ground-truth mode: one chunk every N ms on absolute deadlines."),
        click.option("--fail-rate", type=fraction(), default=0.0, help="Fraction answered HTTP 500."),
        click.option("--midstream-error-rate", type=fraction(), default=0.0),
        click.option("--drop-rate", type=fraction(), default=0.0,
                     help="Fraction whose connection is dropped mid-stream."),
        click.option("--hang-rate", type=fraction(), default=0.0,
                     help="Fraction whose stream stops mid-way and never ends."),
        click.option("--omit-usage", is_flag=True, help="Never send a usage object."),
        click.option("--sse-comments", is_flag=True, help="Send ': keep-alive' comments."),
        click.option("--crlf", is_flag=True, help="Use CRLF line ends in the event stream."),
        click.option("--fault-seed", type=NON_NEGATIVE_INT, default=0, show_default=True),
        click.option("--eval-answer-key", type=click.Path(dir_okay=False), default=None,
                     help="GSM8K-format JSONL; answer its questions (eval mode)."),
        click.option("--eval-accuracy", type=fraction(), default=0.95, show_default=True),
        click.option("--eval-seed", type=NON_NEGATIVE_INT, default=0, show_default=True),
        click.option("--eval-hang-rate", type=fraction(), default=0.0,
                     help="Fraction of answers from the key whose stream stops mid-way and "
                          "never ends (a stalled eval request)."),
        # the KV model (infersweep/sim/kvcache.py); all off by default
        click.option("--enable-prefix-caching", is_flag=True,
                     help="Reuse the KV of prompt pages seen before (a prefix cache per DP "
                          "rank); usage then reports prompt_tokens_details.cached_tokens."),
        click.option("--page-size", type=POSITIVE_INT, default=16, show_default=True,
                     help="Tokens per KV page (vLLM --block-size, SGLang --page-size); only "
                          "full pages are cached."),
        click.option("--kv-pool-tokens", type=NON_NEGATIVE_INT, default=0, show_default=True,
                     help="KV pool per DP rank, in tokens (0: unlimited). Requests wait for "
                          "pages, unreferenced cached pages are evicted LRU, and running "
                          "requests that outgrow it preempt the newest one."),
        click.option("--cpu-offload-gb", type=non_negative_float(), default=0.0,
                     show_default=True,
                     help="CPU-DRAM KV tier per DP rank, GB (needs --enable-prefix-caching "
                          "and --kv-pool-tokens): evicted pages go there and are loaded back "
                          "on a hit."),
        click.option("--offload-gbps", type=positive_float(), default=25.0, show_default=True,
                     help="CPU tier -> GPU load bandwidth, GB/s (a hit's transfer delays "
                          "that request's prefill)."),
        click.option("--dp-routing", type=click.Choice(["least-loaded", "session"]),
                     default="least-loaded", show_default=True,
                     help="How a request picks its DP rank: the least-loaded one, or "
                          "'session': a consistent hash of its session header "
                          "(X-SMG-Routing-Key, X-Session-ID, X-Dynamo-Session-ID, "
                          "X-Correlation-ID; least-loaded without one)."),
    ]
    for o in reversed(opts):
        f = o(f)
    return f


def _build_config(role: str, max_num_seqs: int, kw: dict):
    from infersweep.diagnostics import InputError
    from infersweep.sim.evalmode import AnswerKey
    from infersweep.sim.faults import FaultConfig
    from infersweep.sim.model import ModelParams
    from infersweep.sim.server import SimConfig

    for name in ("fail_rate", "midstream_error_rate", "drop_rate", "hang_rate"):
        if not 0 <= kw[name] <= 1:
            raise InputError(f"--{name.replace('_', '-')} must be in [0, 1]")
    if kw["max_model_len"] <= 0 or max_num_seqs <= 0 or kw["stream_interval"] <= 0:
        raise InputError("--max-model-len, --max-num-seqs and --stream-interval must be positive")
    if kw["prefill_tps"] <= 0:
        raise InputError("--prefill-tps must be positive")
    if (kw["fixed_ttft_ms"] is None) != (kw["fixed_itl_ms"] is None):
        raise InputError("--fixed-ttft-ms and --fixed-itl-ms go together")
    kv = _kv_config(kw)
    if kv.enabled and kw["fixed_itl_ms"] is not None:
        raise InputError("the fixed schedule (--fixed-ttft-ms/--fixed-itl-ms) has no KV model: "
                         "drop --enable-prefix-caching and --kv-pool-tokens, or the fixed "
                         "schedule")
    key = None
    if kw["eval_answer_key"]:
        key = AnswerKey(kw["eval_answer_key"], kw["eval_accuracy"], kw["eval_seed"])
    return SimConfig(
        role=role, served_model_names=list(kw["served_model_name"]),
        max_model_len=kw["max_model_len"], dp_size=kw["dp_size"],
        model=ModelParams(prefill_tps=kw["prefill_tps"], decode_base_ms=kw["decode_base_ms"],
                          decode_per_seq_ms=kw["decode_per_seq_ms"], max_num_seqs=max_num_seqs,
                          max_num_batched_tokens=kw["max_num_batched_tokens"],
                          stream_interval=kw["stream_interval"],
                          fixed_ttft_ms=kw["fixed_ttft_ms"], fixed_itl_ms=kw["fixed_itl_ms"],
                          kv=kv),
        dp_routing=kw["dp_routing"],
        faults=FaultConfig(fail_rate=kw["fail_rate"], midstream_error_rate=kw["midstream_error_rate"],
                           drop_rate=kw["drop_rate"], hang_rate=kw["hang_rate"],
                           eval_hang_rate=kw["eval_hang_rate"],
                           omit_usage=kw["omit_usage"], sse_comments=kw["sse_comments"],
                           crlf=kw["crlf"], seed=kw["fault_seed"]),
        answer_key=key)


def _kv_config(kw: dict):
    """The KV model of ``kw``'s cache flags; combinations that cannot work are refused."""
    from infersweep.diagnostics import InputError
    from infersweep.sim.kvcache import KVConfig

    page, pool, cpu_gb = kw["page_size"], kw["kv_pool_tokens"], kw["cpu_offload_gb"]
    if pool and pool < page:
        raise InputError(f"--kv-pool-tokens {pool} holds no page of --page-size {page}")
    cpu_tokens = 0
    if cpu_gb > 0:
        if not kw["enable_prefix_caching"] or not pool:
            raise InputError("--cpu-offload-gb needs --enable-prefix-caching and "
                             "--kv-pool-tokens (pages reach the CPU tier when the GPU pool "
                             "evicts them)")
        if kw["kv_bytes_per_token"] <= 0:
            raise InputError("--cpu-offload-gb needs a positive --kv-bytes-per-token")
        cpu_tokens = int(cpu_gb * 1e9 // kw["kv_bytes_per_token"])
        if cpu_tokens < page:
            raise InputError(f"--cpu-offload-gb {cpu_gb:g} holds no page of {page} tokens at "
                             f"{kw['kv_bytes_per_token']} bytes per token")
    return KVConfig(prefix_caching=kw["enable_prefix_caching"], page_size=page, pool_tokens=pool,
                    cpu_tokens=cpu_tokens, kv_bytes_per_token=kw["kv_bytes_per_token"],
                    offload_gbps=kw["offload_gbps"])


def _forward(kw: dict) -> list[str]:
    """Re-render model options as CLI flags for worker processes."""
    out = []
    for k, v in kw.items():
        flag = "--" + k.replace("_", "-")
        if isinstance(v, tuple):
            for x in v:
                out += [flag, str(x)]
        elif isinstance(v, bool):
            if v:
                out.append(flag)
        elif v is not None:
            out += [flag, str(v)]
    return out


@click.group()
def sim():
    """Engine simulator: OpenAI-compatible streaming servers with a performance model."""


@sim.command("serve")
@click.option("--role", type=click.Choice(["aggregated", "prefill", "decode"]),
              default="aggregated", show_default=True)
@click.option("--host", default="127.0.0.1", callback=_loopback, show_default=True)
@click.option("--port", type=PORT, default=8000, show_default=True)
@click.option("--max-num-seqs", type=POSITIVE_INT, default=256, show_default=True,
              help="Admission limit: running sequences (per DP rank); more requests queue.")
@click.option("--tls-cert", type=click.Path(dir_okay=False), default=None,
              help="Serve https with this PEM certificate (chain); needs --tls-key.")
@click.option("--tls-key", type=click.Path(dir_okay=False), default=None,
              help="PEM private key of --tls-cert.")
@click.option("--kv-bytes-per-token", type=NON_NEGATIVE_INT, default=70000, show_default=True,
              help="KV bytes of one token (sizes the CPU tier of --cpu-offload-gb and its "
                   "load time).")
@model_options
def serve_cmd(role, host, port, max_num_seqs, tls_cert, tls_key, **kw):
    """Serve one simulated engine (/v1/completions, /v1/chat/completions, /health, /metrics)."""

    from infersweep.sim.server import run_server

    cfg = _build_config(role, max_num_seqs, kw)
    ctx = _server_tls(tls_cert, tls_key)
    click.echo(f"sim serve ({role}) on {'https' if ctx else 'http'}://{host}:{port}", err=True)
    _serve(run_server(cfg, host, port, ssl_context=ctx), host, port)


def _serve(coro, host: str, port: int) -> None:
    """Run a server until a stop signal; a port it cannot listen on is a one-line error."""
    from infersweep.sim.cluster import _run_loop, listen_error

    try:
        _run_loop(coro)
    except OSError as exc:
        raise listen_error(host, port, exc) from None


def _server_tls(cert: str | None, key: str | None):
    """A server-side TLS context for --tls-cert/--tls-key, or None for plain http."""
    if not cert and not key:
        return None
    if not (cert and key):
        raise click.UsageError("--tls-cert and --tls-key go together")
    import ssl

    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    try:
        ctx.load_cert_chain(cert, key)
    except (OSError, ssl.SSLError) as exc:
        raise click.BadParameter(f"cannot load {cert} / {key}: {getattr(exc, 'strerror', None) or exc}",
                                 param_hint="--tls-cert/--tls-key") from exc
    ctx.set_alpn_protocols(["http/1.1"])
    return ctx


@sim.command("router")
@click.option("--host", default="127.0.0.1", callback=_loopback, show_default=True)
@click.option("--port", type=PORT, default=8000, show_default=True)
@click.option("--prefill", "prefill", multiple=True, help="Prefill worker URL (with --decode).")
@click.option("--decode", "decode", multiple=True, help="Decode worker URL (with --prefill).")
@click.option("--worker", "worker", multiple=True,
              help="Aggregated worker URL: each request streams from one of them (instead of "
                   "--prefill/--decode).")
@click.option("--policy", type=click.Choice(["round-robin", "least-loaded", "consistent-hash"]),
              default="round-robin", show_default=True,
              help="consistent-hash: a request's session header picks its worker (a hash "
                   "ring), round-robin for requests without one.")
@click.option("--kv-base-ms", type=non_negative_float(), default=2.0, show_default=True)
@click.option("--kv-bytes-per-token", type=NON_NEGATIVE_INT, default=70000, show_default=True)
@click.option("--kv-gbps", type=positive_float(), default=50.0, show_default=True)
def router_cmd(host, port, prefill, decode, worker, policy, kv_base_ms, kv_bytes_per_token,
               kv_gbps):
    """Front end over disaggregated (--prefill/--decode) or aggregated (--worker) workers.

    Disaggregated: a prefill worker, a modelled KV transfer, then a streamed decode worker.
    Aggregated: one of the workers streams the whole answer."""
    from infersweep.sim.router import RouterConfig, run_router

    if worker and (prefill or decode):
        raise click.UsageError("--worker (aggregated) and --prefill/--decode (disaggregated) "
                               "do not go together; give one or the other")
    if not worker and not (prefill and decode):
        raise click.UsageError("give --prefill and --decode URLs (disaggregated), or --worker "
                               "URLs (aggregated)")
    for u in prefill + decode + worker:
        if not u.startswith("http://"):
            raise click.BadParameter(f"{u!r}: expected http://host:port")
    cfg = RouterConfig(list(prefill), list(decode), policy, kv_base_ms, kv_bytes_per_token, kv_gbps,
                       workers=list(worker))
    click.echo(f"sim router on http://{host}:{port}", err=True)
    _serve(run_router(cfg, host, port), host, port)


@sim.command("cluster")
@click.option("--topology", type=click.Choice(["agg", "1p1d", "2p1d"]), required=True)
@click.option("--host", default="127.0.0.1", callback=_loopback, show_default=True)
@click.option("--port", type=click.IntRange(1, 65535), default=8000, show_default=True,
              help="Front-end port; workers use the next ports.")
@click.option("--prefill-max-num-seqs", type=POSITIVE_INT, default=256, show_default=True)
@click.option("--decode-max-num-seqs", type=POSITIVE_INT, default=None,
              help="[128 for 1p1d, 2048 for 2p1d, 256 for agg]")
@click.option("--policy", type=click.Choice(["round-robin", "least-loaded", "consistent-hash"]),
              default="round-robin", show_default=True)
@click.option("--kv-base-ms", type=non_negative_float(), default=2.0, show_default=True)
@click.option("--kv-bytes-per-token", type=NON_NEGATIVE_INT, default=70000, show_default=True,
              help="KV bytes of one token: the router's KV transfer and the workers' CPU tier.")
@click.option("--kv-gbps", type=positive_float(), default=50.0, show_default=True)
@model_options
def cluster_cmd(topology, host, port, prefill_max_num_seqs, decode_max_num_seqs, policy,
                kv_base_ms, kv_bytes_per_token, kv_gbps, **kw):
    """Start a whole topology (agg, 1p1d, 2p1d) on this machine; Ctrl-C stops it."""
    from infersweep.sim.cluster import TOPOLOGIES, run_cluster
    from infersweep.sim.router import RouterConfig

    workers = sum(TOPOLOGIES[topology])
    if port + workers > 65535:
        raise click.BadParameter(
            f"{topology} listens on ports {port}..{port + workers}; the highest TCP port is "
            f"65535 (use at most {65535 - workers})", param_hint="'--port'")
    dmax = decode_max_num_seqs or {"agg": 256, "1p1d": 128, "2p1d": 2048}[topology]
    _build_config("aggregated", dmax, dict(kw, kv_bytes_per_token=kv_bytes_per_token))
    common = [*_forward(kw), "--kv-bytes-per-token", str(kv_bytes_per_token)]
    args = {"aggregated": ["--max-num-seqs", str(dmax), *common],
            "prefill": ["--max-num-seqs", str(prefill_max_num_seqs), *common],
            "decode": ["--max-num-seqs", str(dmax), *common]}
    run_cluster(topology, host, port, args,
                RouterConfig(policy=policy, kv_base_ms=kv_base_ms,
                             kv_bytes_per_token=kv_bytes_per_token, kv_gbps=kv_gbps))
