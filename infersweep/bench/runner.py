"""The parent process of a run: plan, probe, fork workers, show progress, merge, judge."""

from __future__ import annotations

import contextlib
import math
import multiprocessing as mp
import multiprocessing.connection
import os
import shutil
import signal
import tempfile
import time
from dataclasses import dataclass, field, replace
from urllib.parse import urlsplit

import click

from infersweep import progress
from infersweep.bench import (
    dataset,
    engine_checks,
    httpconn,
    metrics,
    options,
    outputs,
    probe,
    purestats,
    result,
    runtime,
    seeds,
)
from infersweep.bench import records as records_file
from infersweep.bench.tls import TLSConfig
from infersweep.bench.tokenizer import LocalTokenizer, is_local, render_texts
from infersweep.bench.worker import Shared, WorkerSpec, worker_main
from infersweep.bench.workload import Workload, auth_headers
from infersweep.diagnostics import InputError
from infersweep.lifeline import Interrupted, SignalGuard, blocked

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
    seed: int | None = None   # None: derived from run_id and the point (see seeds)
    run_id: str | None = None
    extra_body: str | None = None  # a JSON object merged into every request
    num_workers: int = 0
    request_timeout: float = 21600.0
    idle_timeout: float = 600.0
    ready_timeout: float = 60.0
    probe: bool = True
    max_failed_fraction: float = 0.05
    no_progress: bool = False
    timestamp_source: str = "auto"
    ca_cert: str | None = None
    insecure: bool = False


def validate(a: BenchArgs) -> None:
    """Every argument check, before anything is sent (the CLI does the range checks at parse
    time too; these guard the Python API and the checks that involve several options)."""
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
    if not (a.burstiness > 0 and math.isfinite(a.burstiness)):
        errs.append("--burstiness must be a positive number")
    if not (0 <= a.max_failed_fraction <= 1):
        errs.append("--max-failed-fraction must be in [0, 1]")
    if a.num_workers < 0:
        errs.append(f"--num-workers must be 0 (auto) or more (got {a.num_workers})")
    if a.seed is not None and a.seed < 0:
        errs.append(f"--seed must be 0 or more (got {a.seed})")
    if a.vocab_size <= 0:
        errs.append(f"--vocab-size must be positive (got {a.vocab_size})")
    for name in ("request_timeout", "idle_timeout", "ready_timeout"):
        v = getattr(a, name)
        if not (math.isfinite(v) and v > 0):
            errs.append(f"--{name.replace('_', '-')} must be a positive, finite number of "
                        f"seconds (got {v})")
    if a.timestamp_source not in httpconn.TIMESTAMP_MODES:
        errs.append(f"--timestamp-source must be one of {', '.join(httpconn.TIMESTAMP_MODES)}")
    elif a.timestamp_source == "kernel" and not httpconn.kernel_timestamps_available():
        errs.append("--timestamp-source kernel: this platform gives no kernel receive "
                    "timestamps on TCP sockets (use auto or user)")
    for flag, parse, value in (("--base-url", options.base_url, a.base_url),
                               ("--endpoint", options.endpoint, a.endpoint),
                               ("--percentile-metrics", options.percentile_metrics,
                                a.percentile_metrics),
                               ("--metric-percentiles", options.metric_percentiles,
                                a.metric_percentiles),
                               ("--goodput", options.goodput, a.goodput),
                               ("--metadata", options.metadata, a.metadata),
                               ("--extra-body", options.extra_body, a.extra_body)):
        if value is None:
            continue
        try:
            parse(value)
        except ValueError as exc:
            errs.append(f"{flag} {exc}")
    scheme = urlsplit(a.base_url).scheme
    if (a.ca_cert or a.insecure) and scheme != "https":
        errs.append("--ca-cert and --insecure apply to https base URLs only")
    for k, v in auth_headers().items():
        if (why := httpconn.check_header(k, v)) is not None:
            errs.append(f"OPENAI_API_KEY cannot be sent: {why}")
    if errs:
        raise InputError(errs if len(errs) > 1 else errs[0])


def auto_workers(a: BenchArgs) -> int:
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    c = a.max_concurrency or a.num_prompts
    return max(1, min(cores or 1, math.ceil(c / 1024), a.num_prompts))


def worker_count(a: BenchArgs) -> int:
    """--num-workers (or auto), at most one per concurrency slot and per prompt: a worker
    with an empty slice of the concurrency budget would have no cap at all."""
    if not a.num_workers:
        return auto_workers(a)
    cap = min(a.max_concurrency or a.num_prompts, a.num_prompts)
    if a.num_workers > cap:
        _note(f"--num-workers {a.num_workers} is more than there is work for: using {cap}")
    return min(a.num_workers, cap)


def slices(total: int | None, w: int, n: int) -> list[int]:
    if total is None:
        return [math.ceil(n / w)] * w
    base, rem = divmod(total, w)
    return [base + (1 if k < rem else 0) for k in range(w)]


STOP_GRACE_S = 5.0  # how long stopped workers get to write their records before a kill


def run(a: BenchArgs) -> int:
    """Run the benchmark; the exit code: 0, 2 (too many failed requests), 1 (the outputs
    could not be written; they are kept in a named folder), or 128+N after signal N."""
    validate(a)
    seed = resolve_seed(a)
    a = replace(a, seed=seed.value)
    selected = options.percentile_metrics(a.percentile_metrics)
    pcts = options.metric_percentiles(a.metric_percentiles)
    goodput = options.goodput(a.goodput)
    chat = a.backend == "openai-chat" or a.endpoint.rstrip("/").endswith("chat/completions")
    scheme, host, port = options.base_url(a.base_url)
    url = a.base_url.rstrip("/") + a.endpoint
    tls = None
    if scheme == "https":
        tls = TLSConfig(ca_cert=a.ca_cert, insecure=a.insecure)
        tls.context()  # a bad --ca-cert is an error now, not in every worker
    targets = None
    date = result.now_date()  # one stamp for the result's "date" and its default file name
    if a.save_result:  # every output path is checked before the first request
        name = a.result_filename or result.default_filename(
            a.backend, a.request_rate, a.max_concurrency, a.model, date)
        targets = outputs.targets(a.result_dir, name, a.save_records)
        outputs.preflight(targets)

    with SignalGuard() as guard:
        try:
            return _run(a, guard, selected, pcts, goodput, chat, host, port, url, tls, targets,
                        date, seed)
        except Interrupted as exc:
            _note(f"interrupted by {exc.name} before the measured run started; nothing written")
            return exc.exit_code


def resolve_seed(a: BenchArgs) -> seeds.Seed:
    """--seed as given, else a seed of this run's own for this point (see :mod:`seeds`)."""
    point = seeds.point_label(
        endpoint=a.endpoint, model=a.served_model_name or a.model,
        input_len=a.random_input_len, output_len=a.random_output_len,
        range_ratio=a.random_range_ratio, num_prompts=a.num_prompts,
        num_warmups=a.num_warmups, max_concurrency=a.max_concurrency,
        request_rate=a.request_rate, result_filename=a.result_filename)
    return seeds.resolve(a.seed, a.run_id, point)


def _prepare(a: BenchArgs, chat: bool):
    if not math.isinf(a.request_rate) and dataset.np is None:
        raise InputError("--request-rate other than inf (an open-loop schedule) needs numpy, "
                         "whose gamma generator draws the seeded arrival times; this Python has "
                         "no numpy: use --request-rate inf with --max-concurrency (closed loop), "
                         "or a Python with numpy")
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
    extra = options.extra_body(a.extra_body) if a.extra_body is not None else {}
    common = dict(model=model, chat=chat, prompt_mode=mode, ignore_eos=a.ignore_eos,
                  continuous_usage=a.continuous_usage, extra=extra)
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
    return mode, vocab, common, work, warm


def _run(a, guard, selected, pcts, goodput, chat, host, port, url, tls, targets, date,
         seed) -> int:
    mode, vocab, common, work, warm = _prepare(a, chat)

    # ---- readiness ----
    if a.probe:
        which = probe.wait_ready(a.base_url.rstrip("/"), a.ready_timeout, tls, auth_headers())
        tiny = dataset.make_plan(1, 8, 2, 1.0, a.seed + 7, vocab)
        tw = Workload(tiny, **{**common, "prompt_mode": "pseudo" if mode == "text" else mode})
        probe.test_request(url, tw.body(0), chat, auth_headers(), timeout=min(a.request_timeout, 600),
                           tls=tls)
        _note(f"server ready ({which} answered; test request streamed and reported usage)")

    # ---- workers ----
    w = worker_count(a)
    schedule = None
    if not math.isinf(a.request_rate):
        schedule = dataset.arrival_times(a.num_prompts, a.request_rate, a.burstiness, a.seed)
    tmp = tempfile.mkdtemp(prefix="infersweep-bench-")
    keep_tmp = False
    procs: list = []
    try:
        spec = WorkerSpec(host=host, port=port,
                          path=urlsplit(a.base_url).path.rstrip("/") + a.endpoint,
                          num_workers=w,
                          concurrency_slices=slices(a.max_concurrency, w, a.num_prompts)
                          if schedule is None or a.max_concurrency else [0] * w,
                          schedule=schedule, request_timeout=a.request_timeout,
                          idle_timeout=a.idle_timeout, keep_text=a.save_detailed,
                          records_dir=tmp, timestamp_source=a.timestamp_source, tls=tls)
        ctx = mp.get_context("fork")
        shared = Shared(ctx, w)
        me = os.getpid()
        procs = [ctx.Process(target=worker_main, args=(k, spec, work, warm, shared, me),
                             daemon=True) for k in range(w)]
        interrupted = None
        start_unix = time.time()
        try:
            with blocked():  # a child installs its own handlers before it sees a signal
                for p in procs:
                    p.start()
            if a.num_warmups:
                _note(f"{a.num_warmups} warm-up requests (not measured)")
            _await_ready(procs, shared, w, tmp)
            # every worker has finished its warm-ups: the measured window starts now
            lead_ns = 20_000_000
            start_unix = time.time() + lead_ns / 1e9
            shared.t0_ns.value = time.monotonic_ns() + lead_ns
            _note(f"{a.num_prompts} requests, {w} worker process(es), "
                  f"max concurrency {a.max_concurrency or 'unlimited'}, rate {a.request_rate}")
            with progress.bar(a.num_prompts, "requests", enabled=not a.no_progress) as bar:
                while alive := [p.sentinel for p in procs if p.is_alive()]:
                    bar.update(shared.completed.value, shared.failed.value)
                    mp.connection.wait(alive, timeout=0.5)
                bar.update(shared.completed.value, shared.failed.value)
        except Interrupted as exc:
            interrupted = exc
            if shared.t0_ns.value > 0:
                interrupted.at_s = max(0.0, (time.monotonic_ns() - shared.t0_ns.value) / 1e9)
            guard.defer()
            _note(f"interrupted by {exc.name}: stopping the client workers")
            _stop_workers(procs, shared)
        guard.defer()  # from here on a signal only changes the exit code
        for p in procs:
            p.join()
        records, lines, metas = _collect(tmp, w)
        out, summary, errors, client, duration = _assemble(
            a, records, metas, work, start_unix, selected, pcts, goodput, chat, mode,
            interrupted, date, seed)
        if interrupted is None:
            _print_summary(out, summary, errors, client)
            _warn_engine(out["infersweep"], chat, a.ignore_eos)
        elif hasattr(interrupted, "at_s"):
            _note(f"partial run: {summary['completed']} requests completed, "
                  f"{len(records) - summary['completed']} failed, "
                  f"{a.num_prompts - len(records)} not finished when it was stopped")
        started = interrupted is None or hasattr(interrupted, "at_s")
        if not started:
            _note("stopped before the measured window started: nothing written")
        if targets is not None and started:
            dest = targets if interrupted is None else targets.interrupted()
            meta = records_file.meta_line(num_prompts=a.num_prompts, duration=duration,
                                          chat=chat, selected=selected, percentiles=pcts,
                                          **seed.describe(),
                                          **({"interrupted": interrupted.name}
                                             if interrupted else {}))
            done = outputs.write(dest, lambda p: result.write(p, out),
                                 lambda p: records_file.write(p, meta, lines), tmp)
            for path, what in ((done.result, "result"), (done.records, "per-request records")):
                if path:
                    _note(f"{what} written to {path}")
            if done.errors:
                keep_tmp = True
                for e in done.errors:
                    click.echo(f"error: {e}", err=True)
                kept = list(done.kept)
                if dest.records and done.records is None and not any(
                        k.endswith(outputs.RECORDS_SUFFIX) for k in kept):
                    # not even a scratch copy fitted: the workers' own files are the records
                    head = os.path.join(tmp, "records-meta.jsonl")
                    with contextlib.suppress(OSError):
                        records_file.write(head, meta, [])
                    kept.append(f"the records as {tmp}/part-*.jsonl (rebuild the records file "
                                f"with: cat {head} {tmp}/part-*.jsonl > "
                                f"{os.path.basename(dest.records)})")
                click.echo("error: the run finished but its outputs could not all be written; "
                           f"kept in: {', '.join(kept)}. `infersweep bench recompute "
                           "<records.jsonl>` recomputes the summary from the records", err=True)
                return 1
        if interrupted is not None:
            return interrupted.exit_code
        if guard.exit_code:
            return guard.exit_code
        frac = 1 - summary["completed"] / a.num_prompts
        if frac > a.max_failed_fraction:
            click.echo(f"error: {a.num_prompts - summary['completed']} of {a.num_prompts} requests "
                       f"failed ({frac:.1%} > --max-failed-fraction {a.max_failed_fraction:.0%}): "
                       + ", ".join(f"{k}={v}" for k, v in errors.items()), err=True)
            return 2
        return 0
    finally:
        for p in procs:  # on any error: no worker outlives the run
            if p.is_alive():
                p.kill()
                p.join()
        if not keep_tmp:
            shutil.rmtree(tmp, ignore_errors=True)


def _await_ready(procs, shared, w: int, tmp: str) -> None:
    """Wait until every worker has finished its warm-ups (or one of them has died)."""
    while shared.ready.value < w:
        dead = [k for k, p in enumerate(procs) if not p.is_alive()]
        if dead:
            shared.t0_ns.value = -1  # release the others
            for p in procs:
                p.join(STOP_GRACE_S)
                if p.is_alive():
                    p.kill()
            why = []
            for k in dead:
                try:
                    with open(os.path.join(tmp, f"meta-{k}.json"), "rb") as f:
                        why.append(runtime.loads(f.read()).get("fatal") or "exited")
                except (OSError, ValueError):
                    why.append(f"exit code {procs[k].exitcode}")
            raise InputError(f"client worker(s) {', '.join(map(str, dead))} failed before the "
                             f"measured run started ({'; '.join(why)})")
        time.sleep(0.005)


def _stop_workers(procs, shared) -> None:
    """Ask every worker to stop (they keep the requests they finished), then make sure."""
    shared.t0_ns.value = -1  # workers still waiting to start give up
    for p in procs:
        if p.is_alive():
            with contextlib.suppress(ProcessLookupError):
                os.kill(p.pid, signal.SIGTERM)
    end = time.monotonic() + STOP_GRACE_S
    for p in procs:
        p.join(max(0.0, end - time.monotonic()))
    for p in procs:
        if p.is_alive():
            p.kill()
            p.join()


def _assemble(a, records, metas, work, start_unix, selected, pcts, goodput, chat, mode,
              interrupted, date, seed):
    last_end = max((r["end_s"] for r in records), default=0.0)
    # an interrupted run's window lasts until the stop, not until its last finished request
    duration = max(last_end, getattr(interrupted, "at_s", 0.0), 1e-9)
    end_unix = start_unix + duration
    summary = metrics.summarize(records, a.num_prompts, duration, chat=chat, selected=selected,
                                percentiles=pcts, goodput=goodput or None)
    client = _client_health(metas, summary, quiet_interrupted=interrupted is not None)
    client["requests_read_whole"] = metrics.read_whole(records, chat)
    errors = metrics.error_counts(records)
    by_id = {r["id"]: r for r in records}
    input_lens = [work.prompt_len(i) for i in range(a.num_prompts)]
    output_lens = [by_id[i]["output_tokens"] if i in by_id and by_id[i]["ok"] else 0
                   for i in range(a.num_prompts)]
    mism = [r for r in records if r["ok"] and r["server_prompt_tokens"] is not None
            and r["server_prompt_tokens"] != r["prompt_len"]]
    lengths = engine_checks.output_lengths(records, a.ignore_eos)
    extras = {
        **seed.describe(), "endpoint": a.endpoint, "prompt_format": mode,
        "random_input_len": a.random_input_len, "random_output_len": a.random_output_len,
        "random_range_ratio": a.random_range_ratio, "num_warmups": a.num_warmups,
        "timestamp_source": client["timestamps"]["source"],
        "errors": errors, "client": client,
        "server_prompt_token_mismatches": len(mism),
        "output_length_mismatches": lengths["mismatched"], "output_length": lengths,
        "cached_prompt_tokens": engine_checks.cached_prompt_tokens(records),
        "extra_body": work.extra or None,
        "runtime": runtime.describe(), "build": runtime.build(),
    }
    if interrupted is not None:
        extras["interrupted"] = {"signal": interrupted.name, "finished": len(records),
                                 "not_finished": a.num_prompts - len(records)}
    out = result.build(args=a, summary=summary, input_lens=input_lens, output_lens=output_lens,
                       start_unix=start_unix, end_unix=end_unix, date=date,
                       extras=extras)
    if a.save_detailed:
        ok = [r for r in records if r["ok"]]
        per = [metrics.request_metrics(r, chat) for r in ok]
        out["ttfts"] = [m.ttft for m in per]
        out["itls"] = [m.chunk_gaps for m in per]
        out["generated_texts"] = [r.get("text", "") for r in ok]
        out["errors"] = [r["error"] for r in records if not r["ok"]]
    return out, summary, errors, client, duration


def _collect(tmp: str, w: int):
    """The workers' records (parsed, and as the bytes they wrote) and their meta blocks."""
    pairs, metas = [], []
    for k in range(w):
        try:
            with open(os.path.join(tmp, f"part-{k}.jsonl"), "rb") as f:
                pairs.extend((runtime.loads(line), line.rstrip(b"\n")) for line in f)
            with open(os.path.join(tmp, f"meta-{k}.json"), "rb") as f:
                metas.append(runtime.loads(f.read()))
        except FileNotFoundError:
            metas.append({"worker": k, "fatal": "worker exited without writing its records"})
    pairs.sort(key=lambda p: p[0]["id"])
    return [p[0] for p in pairs], [p[1] for p in pairs], metas


def _client_health(metas: list[dict], summary: dict, quiet_interrupted: bool = False) -> dict:
    lags = sorted(float(x) for m in metas for x in m.get("loop_lag_ms", [])) or [0.0]
    cpu = sum(m.get("cpu_s", 0.0) for m in metas)
    chunks = sum(m.get("chunks", 0) for m in metas)
    util = max((m["cpu_s"] / m["wall_s"] for m in metas if m.get("wall_s")), default=0.0)
    health = {
        "workers": len(metas),
        "loop_lag_p50_ms": purestats.percentile_sorted(lags, 50),  # = numpy's, bit for bit
        "loop_lag_p99_ms": purestats.percentile_sorted(lags, 99),
        "loop_lag_max_ms": lags[-1],
        "cpu_s": cpu,
        "max_worker_cpu_util": util,
        "chunks": chunks,
        "cpu_s_per_1k_chunks": cpu / chunks * 1000 if chunks else None,
        "connections_opened": sum(m.get("connections", 0) for m in metas),
        "fatal": [m["fatal"] for m in metas if m.get("fatal")
                  and not (quiet_interrupted and "without writing" in m["fatal"])],
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


def recompute(path: str) -> dict:
    """Recompute the summary block from a records file."""
    meta, recs = records_file.read(path)
    return metrics.summarize(recs, meta["num_prompts"], meta["duration"], chat=meta["chat"],
                             selected=meta["percentile_metrics"],
                             percentiles=meta["metric_percentiles"])


def _note(msg: str) -> None:
    click.echo(msg, err=True)


def _warn_engine(block: dict, chat: bool, ignore_eos: bool) -> None:
    """Warnings for what the engine did other than asked (see :mod:`engine_checks`)."""
    for msg in (engine_checks.length_warning(block["output_length"], chat, ignore_eos),
                engine_checks.cache_warning(block["cached_prompt_tokens"],
                                            block["seed_origin"])):
        if msg:
            click.echo(f"warning: {msg}", err=True)


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
    ext = out["infersweep"]
    lengths = ext["output_length"]
    lines.append(f"Output length vs requested:   {lengths['mismatched']} of "
                 f"{lengths['requests']} differ" + (f" ({lengths['longer']} longer, "
                                                    f"{lengths['shorter']} shorter)"
                                                    if lengths["longer"] + lengths["shorter"]
                                                    else ""))
    cached = ext["cached_prompt_tokens"]
    lines.append("Cached prompt tokens:         " + (
        "not reported by the server" if cached is None else
        f"{cached['cached_tokens']} of {cached['prompt_tokens']} ({cached['fraction']:.1%}), "
        f"{cached['requests_with_hits']} of {cached['requests_reporting']} requests"))
    origin = {"option": "--seed", "run": f"run {ext.get('run_id')!r} and this point",
              "random": "a random run id"}[ext["seed_origin"]]
    lines.append(f"Prompt seed:                  {ext['seed']} (from {origin})")
    lines.append(f"Client: {client['workers']} worker(s), loop lag p99 "
                 f"{client['loop_lag_p99_ms']:.1f} ms, CPU "
                 f"{client['cpu_s_per_1k_chunks'] or 0:.4f} s per 1k chunks, "
                 f"{client['timestamps']['source']} arrival timestamps")
    lines.append("=" * 50)
    click.echo("\n".join(lines))
