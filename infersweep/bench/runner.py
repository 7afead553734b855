"""The parent process of a run: plan, probe, fork workers, show progress, merge, judge."""

from __future__ import annotations

import math
import multiprocessing as mp
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import click
import numpy as np
import orjson

from infersweep.atomic import atomic_writer
from infersweep.bench import dataset, httpconn, metrics, probe, result
from infersweep.bench.tls import TLSConfig
from infersweep.bench.tokenizer import LocalTokenizer, is_local, render_texts
from infersweep.bench.worker import Shared, WorkerSpec, worker_main
from infersweep.bench.workload import Workload, auth_headers
from infersweep.diagnostics import InputError

LAG_WARN_MS = 10.0
CPU_WARN = 0.9


@dataclass
class BenchArgs:
    backend: str = "openai"
    base_url: str = "http://127.0.0.1:8000"
    endpoint: str = "/v1/completions"
    model: str = ""
    served_model_name: str | None = None
    tokenizer: str | None = None
    trust_remote_code: bool = False
    prompt_format: str = "auto"
    vocab_size: int = dataset.DEFAULT_VOCAB
    random_input_len: int = 1024
    random_output_len: int = 128
    random_range_ratio: float = 1.0
    num_prompts: int = 1000
    num_warmups: int = 0
    max_concurrency: int | None = None
    request_rate: float = math.inf
    burstiness: float = 1.0
    ignore_eos: bool = False
    continuous_usage: bool = True
    percentile_metrics: str = "ttft,tpot,itl,e2el"
    metric_percentiles: str = "90,99,99.9"
    goodput: list[str] = field(default_factory=list)
    save_result: bool = False
    save_detailed: bool = False
    save_records: bool = True
    result_dir: str | None = None
    result_filename: str | None = None
    metadata: list[str] = field(default_factory=list)
    seed: int = 0
    num_workers: int = 0
    request_timeout: float = 21600.0
    idle_timeout: float = 600.0
    ready_timeout: float = 60.0
    probe: bool = True
    max_failed_fraction: float = 0.05
    disable_tqdm: bool = False
    timestamp_source: str = "auto"
    ca_cert: str | None = None
    insecure: bool = False


def validate(a: BenchArgs) -> None:
    errs = []
    if a.num_prompts <= 0:
        errs.append(f"--num-prompts must be at least 1 (got {a.num_prompts})")
    if a.random_input_len <= 0:
        errs.append(f"--random-input-len must be positive (got {a.random_input_len})")
    if a.random_output_len <= 0:
        errs.append(f"--random-output-len must be positive (got {a.random_output_len})")
    if not (0 < a.random_range_ratio <= 1):
        errs.append(f"--random-range-ratio must be in (0, 1] (got {a.random_range_ratio}); "
                    "lengths are drawn from [floor(r*L), L]")
    if a.num_warmups < 0:
        errs.append("--num-warmups must be >= 0")
    if a.max_concurrency is not None and a.max_concurrency <= 0:
        errs.append("--max-concurrency must be positive")
    if not (a.request_rate > 0):
        errs.append("--request-rate must be positive or inf")
    if a.burstiness <= 0:
        errs.append("--burstiness must be positive")
    if not (0 <= a.max_failed_fraction <= 1):
        errs.append("--max-failed-fraction must be in [0, 1]")
    if a.timestamp_source not in httpconn.TIMESTAMP_MODES:
        errs.append(f"--timestamp-source must be one of {', '.join(httpconn.TIMESTAMP_MODES)}")
    elif a.timestamp_source == "kernel" and not httpconn.kernel_timestamps_available():
        errs.append("--timestamp-source kernel: this platform gives no kernel receive "
                    "timestamps on TCP sockets (use auto or user)")
    u = urlsplit(a.base_url)
    try:
        _ = u.port
    except ValueError:
        errs.append(f"--base-url {a.base_url!r}: the port is not a number in 1-65535")
    if u.scheme not in ("http", "https") or not u.hostname:
        errs.append(f"--base-url must be http://host:port or https://host:port (got {a.base_url!r})")
    if (a.ca_cert or a.insecure) and u.scheme != "https":
        errs.append("--ca-cert and --insecure apply to https base URLs only")
    for k, v in auth_headers().items():
        if (why := httpconn.check_header(k, v)) is not None:
            errs.append(f"OPENAI_API_KEY cannot be sent: {why}")
    if errs:
        raise InputError(errs if len(errs) > 1 else errs[0])


def parse_list(text: str, what: str, conv) -> list:
    try:
        return [conv(x) for x in text.split(",") if x.strip()]
    except ValueError as exc:
        raise InputError(f"{what}: cannot parse {text!r}") from exc


def auto_workers(a: BenchArgs) -> int:
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    c = a.max_concurrency or a.num_prompts
    return max(1, min(cores or 1, math.ceil(c / 1024), a.num_prompts))


def slices(total: int | None, w: int, n: int) -> list[int]:
    if total is None:
        return [math.ceil(n / w)] * w
    base, rem = divmod(total, w)
    return [base + (1 if k < rem else 0) for k in range(w)]


def run(a: BenchArgs) -> int:
    validate(a)
    selected = parse_list(a.percentile_metrics, "--percentile-metrics", str.strip)
    for m in selected:
        if m not in metrics.METRICS:
            raise InputError(f"--percentile-metrics: unknown metric {m!r} (ttft, tpot, itl, e2el)")
    pcts = parse_list(a.metric_percentiles, "--metric-percentiles", float)
    goodput = {}
    for g in a.goodput:
        k, _, v = g.partition(":")
        if k not in ("ttft", "tpot", "e2el"):
            raise InputError(f"--goodput {g!r}: key must be ttft, tpot or e2el")
        goodput[k] = float(v)
    chat = a.backend == "openai-chat" or a.endpoint.rstrip("/").endswith("chat/completions")
    if not a.endpoint.rstrip("/").endswith("completions"):
        raise InputError(f"--endpoint {a.endpoint!r}: expected a /v1/completions or "
                         "/v1/chat/completions path")
    u = urlsplit(a.base_url)
    host, port = u.hostname, u.port or (443 if u.scheme == "https" else 80)
    url = a.base_url.rstrip("/") + a.endpoint
    tls = None
    if u.scheme == "https":
        tls = TLSConfig(ca_cert=a.ca_cert, insecure=a.insecure)
        tls.context()  # a bad --ca-cert is an error now, not in every worker

    # ---- workload (identical for any worker count) ----
    tok = None
    mode = a.prompt_format
    if mode in ("auto", "text") and is_local(a.tokenizer):
        tok = LocalTokenizer(a.tokenizer, a.trust_remote_code)
        mode = "text"
    elif mode == "text":
        raise InputError(f"--prompt-format text needs a local --tokenizer path (got {a.tokenizer!r})")
    else:
        if a.tokenizer and mode == "auto":
            _note(f"--tokenizer {a.tokenizer!r} is not a local path: tokenizer-free mode "
                  "(token-id prompts; input token counts are exact by construction)")
        mode = "pseudo" if (mode == "auto" and chat) else ("ids" if mode == "auto" else mode)
    vocab = tok.vocab_size if tok else a.vocab_size
    plan = dataset.make_plan(a.num_prompts, a.random_input_len, a.random_output_len,
                             a.random_range_ratio, a.seed, vocab)
    warm_plan = dataset.make_plan(a.num_warmups, a.random_input_len, a.random_output_len,
                                  a.random_range_ratio, a.seed, vocab, warmup=True)
    model = a.served_model_name or a.model
    common = dict(model=model, chat=chat, prompt_mode=mode, ignore_eos=a.ignore_eos,
                  continuous_usage=a.continuous_usage)
    work = Workload(plan, **common)
    warm = Workload(warm_plan, **common) if a.num_warmups else None
    if tok is not None:
        _note(f"tokenizing {a.num_prompts + a.num_warmups} prompts with {a.tokenizer}")
        work.texts, work.text_lens = render_texts(tok, plan, a.seed)
        if warm:
            warm.texts, warm.text_lens = render_texts(tok, warm_plan, a.seed + 1)

    work.prebuild()
    if warm:
        warm.prebuild()

    # ---- readiness ----
    if a.probe:
        which = probe.wait_ready(a.base_url.rstrip("/"), a.ready_timeout, tls, auth_headers())
        tiny = dataset.make_plan(1, 8, 2, 1.0, a.seed + 7, vocab)
        tw = Workload(tiny, **{**common, "prompt_mode": "pseudo" if mode == "text" else mode})
        probe.test_request(url, tw.body(0), chat, auth_headers(), timeout=min(a.request_timeout, 600),
                           tls=tls)
        _note(f"server ready ({which} answered; test request streamed and reported usage)")

    # ---- workers ----
    w = a.num_workers or auto_workers(a)
    schedule = None
    if not math.isinf(a.request_rate):
        schedule = dataset.arrival_times(a.num_prompts, a.request_rate, a.burstiness, a.seed).tolist()
    tmp = tempfile.mkdtemp(prefix="infersweep-bench-")
    spec = WorkerSpec(host=host, port=port, path=u.path.rstrip("/") + a.endpoint,
                      num_workers=w,
                      concurrency_slices=slices(a.max_concurrency, w, a.num_prompts)
                      if schedule is None or a.max_concurrency else [0] * w,
                      schedule=schedule, request_timeout=a.request_timeout,
                      idle_timeout=a.idle_timeout, keep_text=a.save_detailed, records_dir=tmp,
                      timestamp_source=a.timestamp_source, tls=tls)
    ctx = mp.get_context("fork")
    shared = Shared(ctx, w)
    procs = [ctx.Process(target=worker_main, args=(k, spec, work, warm, shared), daemon=True)
             for k in range(w)]
    for p in procs:
        p.start()
    if a.num_warmups:
        _note(f"{a.num_warmups} warm-up requests")
    try:
        shared.t0_ns.value = time.monotonic_ns() + 20_000_000
        start_unix = time.time() + 0.02
        shared.barrier.wait(timeout=max(600.0, a.request_timeout))
    except Exception as exc:  # BrokenBarrierError: a worker died during warm-up
        for p in procs:
            p.kill()
        raise InputError(f"a client worker failed before the run started ({exc})") from exc
    t0 = shared.t0_ns.value
    _note(f"{a.num_prompts} requests, {w} worker process(es), "
          f"max concurrency {a.max_concurrency or 'unlimited'}, rate {a.request_rate}")
    _progress(procs, shared, a.num_prompts, a.disable_tqdm)
    for p in procs:
        p.join()
    end_ns = time.monotonic_ns()
    # ---- merge ----
    records, metas = _collect(tmp, w)
    last_end = max((r["end_s"] for r in records), default=(end_ns - t0) / 1e9)
    duration = max(last_end, 1e-9)
    end_unix = start_unix + duration
    summary = metrics.summarize(records, a.num_prompts, duration, chat=chat, selected=selected,
                                percentiles=pcts, goodput=goodput or None)
    client = _client_health(metas, summary)
    errors = metrics.error_counts(records)
    by_id = {r["id"]: r for r in records}
    input_lens = [work.prompt_len(i) for i in range(a.num_prompts)]
    output_lens = [by_id[i]["output_tokens"] if i in by_id and by_id[i]["ok"] else 0
                   for i in range(a.num_prompts)]
    mism = [r for r in records if r["ok"] and r["server_prompt_tokens"] is not None
            and r["server_prompt_tokens"] != r["prompt_len"]]
    extras = {
        "seed": a.seed, "endpoint": a.endpoint, "prompt_format": mode,
        "random_input_len": a.random_input_len, "random_output_len": a.random_output_len,
        "random_range_ratio": a.random_range_ratio, "num_warmups": a.num_warmups,
        "timestamp_source": client["timestamps"]["source"],
        "errors": errors, "client": client,
        "server_prompt_token_mismatches": len(mism),
    }
    date = result.now_date()
    out = result.build(args=a, summary=summary, input_lens=input_lens, output_lens=output_lens,
                       start_unix=start_unix, end_unix=end_unix, date=date, extras=extras)
    if a.save_detailed:
        ok = [r for r in records if r["ok"]]
        per = [metrics.request_metrics(r, chat) for r in ok]
        out["ttfts"] = [m.ttft for m in per]
        out["itls"] = [m.chunk_gaps for m in per]
        out["generated_texts"] = [r.get("text", "") for r in ok]
        out["errors"] = [r["error"] for r in records if not r["ok"]]
    _print_summary(out, summary, errors, client)
    if a.save_result:
        name = a.result_filename or result.default_filename(
            a.backend, a.request_rate, a.max_concurrency, a.model, date)
        path = os.path.join(a.result_dir, name) if a.result_dir else name
        result.write(path, out)
        _note(f"result written to {path}")
        if a.save_records:
            rpath = os.path.splitext(path)[0] + ".records.jsonl"
            _write_records(rpath, records, a, duration, chat, selected, pcts)
            _note(f"per-request records written to {rpath}")
    frac = 1 - summary["completed"] / a.num_prompts
    if frac > a.max_failed_fraction:
        click.echo(f"error: {a.num_prompts - summary['completed']} of {a.num_prompts} requests "
                   f"failed ({frac:.1%} > --max-failed-fraction {a.max_failed_fraction:.0%}): "
                   + ", ".join(f"{k}={v}" for k, v in errors.items()), err=True)
        return 2
    return 0


def _collect(tmp: str, w: int):
    records, metas = [], []
    for k in range(w):
        try:
            with open(os.path.join(tmp, f"part-{k}.jsonl"), "rb") as f:
                records.extend(orjson.loads(line) for line in f)
            with open(os.path.join(tmp, f"meta-{k}.json"), "rb") as f:
                metas.append(orjson.loads(f.read()))
        except FileNotFoundError:
            metas.append({"worker": k, "fatal": "worker exited without writing its records"})
    for name in os.listdir(tmp):
        os.unlink(os.path.join(tmp, name))
    os.rmdir(tmp)
    records.sort(key=lambda r: r["id"])
    return records, metas


def _client_health(metas: list[dict], summary: dict) -> dict:
    lags = np.array([x for m in metas for x in m.get("loop_lag_ms", [])] or [0.0])
    cpu = sum(m.get("cpu_s", 0.0) for m in metas)
    chunks = sum(m.get("chunks", 0) for m in metas)
    util = max((m["cpu_s"] / m["wall_s"] for m in metas if m.get("wall_s")), default=0.0)
    health = {
        "workers": len(metas),
        "loop_lag_p50_ms": float(np.percentile(lags, 50)),
        "loop_lag_p99_ms": float(np.percentile(lags, 99)),
        "loop_lag_max_ms": float(lags.max()),
        "cpu_s": cpu,
        "max_worker_cpu_util": util,
        "chunks": chunks,
        "cpu_s_per_1k_chunks": cpu / chunks * 1000 if chunks else None,
        "connections_opened": sum(m.get("connections", 0) for m in metas),
        "fatal": [m["fatal"] for m in metas if m.get("fatal")],
        "timestamps": merge_timestamps([m["timestamps"] for m in metas if m.get("timestamps")]),
    }
    warn = []
    if health["loop_lag_p99_ms"] > LAG_WARN_MS:
        warn.append(f"event-loop lag p99 {health['loop_lag_p99_ms']:.1f} ms")
    if util > CPU_WARN:
        warn.append(f"a worker used {util:.0%} of a core")
    health["lagging"] = bool(warn)
    if warn:
        click.echo("warning: the benchmark client itself is lagging (" + "; ".join(warn)
                   + "): TTFT/ITL may reflect the client, not the server; add --num-workers "
                   "or free CPU for the client", err=True)
    for f in health["fatal"]:
        click.echo(f"error: client worker failed: {f}", err=True)
    return health


def merge_timestamps(parts: list[dict]) -> dict:
    """One view of the workers' arrival clocks: which source stamped the reads, and how late
    a user-space clock read would have been (worst worker's percentiles)."""
    kernel = sum(p.get("kernel_reads", 0) for p in parts)
    user = sum(p.get("user_reads", 0) for p in parts)
    if kernel and not user:
        source = "kernel"
    elif kernel:
        source = "mixed"
    elif user:
        source = "user"
    else:
        source = "none"
    out = {"source": source, "kernel_reads": kernel, "user_reads": user}
    delays = [p["read_delay_us"] for p in parts if p.get("read_delay_us")]
    if delays:
        out["read_delay_us"] = {k: max(d[k] for d in delays) for k in ("p50", "p99", "max")}
    return out


def _write_records(path, records, a, duration, chat, selected, pcts) -> None:
    meta = {"meta": {"num_prompts": a.num_prompts, "duration": duration, "chat": chat,
                     "percentile_metrics": selected, "metric_percentiles": pcts,
                     "times": "seconds from benchmark start; chunk_gaps_us from start_s"}}
    with atomic_writer(path) as f:
        f.write(orjson.dumps(meta) + b"\n")
        for r in records:
            f.write(orjson.dumps(r) + b"\n")


def recompute(path: str) -> dict:
    """Recompute the summary block from a records file."""
    with open(path, "rb") as f:
        lines = [orjson.loads(line) for line in f if line.strip()]
    if not lines or "meta" not in lines[0]:
        raise InputError(f"{path}: not an infersweep records file (no meta line)")
    meta = lines[0]["meta"]
    return metrics.summarize(lines[1:], meta["num_prompts"], meta["duration"], chat=meta["chat"],
                             selected=meta["percentile_metrics"],
                             percentiles=meta["metric_percentiles"])


def _progress(procs, shared, n: int, disabled: bool) -> None:
    tty = sys.stderr.isatty()
    t0 = time.monotonic()
    last_pct = -1
    while any(p.is_alive() for p in procs):
        time.sleep(0.5)
        if disabled:
            continue
        done, bad = shared.completed.value, shared.failed.value
        k = done + bad
        el = time.monotonic() - t0
        if tty:
            width = 30
            fill = int(width * k / n)
            sys.stderr.write(f"\r[{'#' * fill}{'.' * (width - fill)}] {k}/{n} "
                             f"({bad} failed) {el:6.1f}s {k / el if el else 0:7.1f} req/s")
            sys.stderr.flush()
        else:
            pct = int(10 * k / n)
            if pct != last_pct:
                last_pct = pct
                sys.stderr.write(f"progress: {k}/{n} ({bad} failed) after {el:.1f}s\n")
    if tty and not disabled:
        sys.stderr.write("\n")


def _note(msg: str) -> None:
    click.echo(msg, err=True)


def _print_summary(out: dict, summary: dict, errors: dict, client: dict) -> None:
    lines = ["============ Serving Benchmark Result ============",
             f"Successful requests:          {out['completed']}",
             f"Failed requests:              {out['failed']}",
             f"Benchmark duration (s):       {out['duration']:.2f}",
             f"Total input tokens:           {out['total_input_tokens']}",
             f"Total generated tokens:       {out['total_output_tokens']}",
             f"Request throughput (req/s):   {out['request_throughput']:.2f}",
             f"Output token throughput (tok/s): {out['output_throughput']:.2f}",
             f"Total token throughput (tok/s):  {out['total_token_throughput']:.2f}"]
    for m in metrics.METRICS:
        if f"mean_{m}_ms" in out:
            lines.append(f"{m.upper():5} mean / median / p99 (ms): {out[f'mean_{m}_ms']:.2f} / "
                         f"{out[f'median_{m}_ms']:.2f} / {out.get(f'p99_{m}_ms', float('nan')):.2f}")
    lines.append(f"Chunk gap mean / p99 (ms):    {out['mean_chunk_gap_ms']:.2f} / "
                 f"{out.get('p99_chunk_gap_ms', float('nan')):.2f}")
    if errors:
        lines.append("Errors: " + ", ".join(f"{k}={v}" for k, v in errors.items()))
    lines.append(f"Client: {client['workers']} worker(s), loop lag p99 "
                 f"{client['loop_lag_p99_ms']:.1f} ms, CPU "
                 f"{client['cpu_s_per_1k_chunks'] or 0:.4f} s per 1k chunks, "
                 f"{client['timestamps']['source']} arrival timestamps")
    lines.append("=" * 50)
    click.echo("\n".join(lines))
