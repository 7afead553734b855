"""``infersweep eval``: GSM8K through lm-eval with our transport; check and collect."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from urllib.parse import urlsplit

import click
import orjson

from infersweep import ghactions, progress
from infersweep.atomic import write_atomic
from infersweep.clitypes import NON_NEGATIVE_INT, POSITIVE_INT, FiniteFloat, non_negative_float
from infersweep.diagnostics import InputError
from infersweep.evals.scope import JOB, Scope, of_job
from infersweep.evals.thresholds import DEFAULT_PATH

TIMEOUT = FiniteFloat(min=0, min_open=True, max=30 * 86400)
CONCURRENCY = click.IntRange(1, 4096)
MAX_TOKENS = click.IntRange(1, 1 << 20)
ATTEMPTS = click.IntRange(1, 100)


@click.group("eval")
def eval_group():
    """Accuracy evals (GSM8K via lm-eval) against an OpenAI-compatible server."""


@eval_group.command("gsm8k")
@click.option("--base-url", required=True, help="e.g. http://127.0.0.1:8000 (OPENAI_API_KEY, "
              "if set, is sent as a bearer token).")
@click.option("--model", required=True, help="The served model name sent in every request.")
@click.option("--api", type=click.Choice(["completions", "chat"]), default="completions",
              show_default=True, help="/v1/completions with the rendered prompt, or "
              "/v1/chat/completions with lm-eval's chat messages.")
@click.option("--output-dir", type=click.Path(file_okay=False), required=True,
              help="Where eval.json, samples.jsonl, lm-eval-results.json and the request "
                   "journal go; the same folder again resumes a stopped run.")
@click.option("--test-file", type=click.Path(dir_okay=False), default=None,
              help="Local GSM8K test split (JSONL); with --train-file, nothing is downloaded.")
@click.option("--train-file", type=click.Path(dir_okay=False), default=None,
              help="Local GSM8K train split (JSONL), the few-shot pool.")
@click.option("--num-fewshot", type=NON_NEGATIVE_INT, default=5, show_default=True)
@click.option("--max-completion-tokens", type=MAX_TOKENS, default=5376, show_default=True)
@click.option("--concurrency", type=CONCURRENCY, default=None,
              help="Requests in flight [default: the row's eval-conc with --row, else 64].")
@click.option("--limit", type=POSITIVE_INT, default=None, help="Only the first N questions.")
@click.option("--max-attempts", type=ATTEMPTS, default=5, show_default=True,
              help="Attempts per request (1 = no retry).")
@click.option("--request-timeout", type=TIMEOUT, default=None,
              help="Seconds an attempt may take [default: 60 + max-completion-tokens / 10, "
                   "598 for 5,376 tokens: a minute of queue and prefill, then the longest "
                   "answer allowed at 10 tokens/s].")
@click.option("--idle-timeout", type=TIMEOUT, default=60.0, show_default=True,
              help="Seconds without progress (the response head or a complete stream event) "
                   "before an attempt counts as stalled and is retried; bytes that trickle in "
                   "without completing an event are no progress.")
@click.option("--retry-backoff", type=non_negative_float(), default=1.0, show_default=True,
              help="Seconds before the first retry; doubles per retry, at most 10x.")
@click.option("--fewshot-as-multiturn/--fewshot-as-one-message", default=True,
              show_default=True, help="Chat API: few-shot examples as user/assistant turns.")
@click.option("--row", "row_file", type=click.Path(dir_okay=False), default=None,
              help="The job's matrix row (JSON): model prefix, recipe fingerprint, image, "
                   "parallelism, eval-conc.")
@click.option("--manifest", type=click.Path(dir_okay=False), default=None,
              help="The job's result manifest (JSON): config key, run id, attempt, image.")
@progress.option()
def gsm8k(base_url, model, api, output_dir, test_file, train_file, num_fewshot,
          max_completion_tokens, concurrency, limit, max_attempts, request_timeout,
          idle_timeout, retry_backoff, fewshot_as_multiturn, row_file, manifest, no_progress):
    """5-shot GSM8K: lm-eval's prompts, filters and metric; our streaming client sends."""
    from infersweep.bench import options
    from infersweep.bench.tls import TLSConfig
    from infersweep.evals import provenance
    from infersweep.evals.client import GenSettings
    from infersweep.evals.transport import (
        Endpoint,
        RetryPolicy,
        auth_headers,
        default_request_timeout,
    )

    try:
        scheme, host, port = options.base_url(base_url)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--base-url") from None
    if (test_file is None) != (train_file is None):
        raise click.UsageError("give both --test-file and --train-file (or neither, to load "
                               "openai/gsm8k from the Hugging Face hub)")
    from infersweep.evals import task

    if test_file is not None:  # bad data is reported before anything is sent or written
        task.check_jsonl(test_file, "--test-file")
        task.check_jsonl(train_file, "--train-file")
    prov = provenance.from_files(row_file, manifest)
    try:
        import lm_eval  # noqa: F401
    except ImportError:
        raise InputError("lm-eval is not installed: pip install 'infersweep[eval]'") from None
    if concurrency is None:
        concurrency = int(prov.get("conc") or 64)
    if request_timeout is None:
        request_timeout = default_request_timeout(max_completion_tokens)
    path = urlsplit(base_url).path.rstrip("/") + (
        "/v1/chat/completions" if api == "chat" else "/v1/completions")
    ep = Endpoint(host, port, path, chat=api == "chat",
                  tls=TLSConfig() if scheme == "https" else None, headers=auth_headers())
    from infersweep.evals import run as runmod

    opts = runmod.EvalOptions(
        endpoint=ep, base_url=base_url,
        settings=GenSettings(model=model, max_completion_tokens=max_completion_tokens),
        policy=RetryPolicy(max_attempts=max_attempts, request_timeout=request_timeout,
                           idle_timeout=idle_timeout, backoff=retry_backoff),
        concurrency=concurrency, out_dir=Path(output_dir), test_file=test_file,
        train_file=train_file, num_fewshot=num_fewshot, limit=limit,
        fewshot_as_multiturn=fewshot_as_multiturn, show_progress=not no_progress,
        provenance=prov)
    s = runmod.run(opts)
    q = s["requests"]
    sc = s["scores"]
    click.echo(f"gsm8k {s['model']}: strict-match {sc['strict-match']['exact_match']:.4f}, "
               f"flexible-extract {sc['flexible-extract']['exact_match']:.4f} over "
               f"{s['n-samples']} questions in {s['duration-s']:.1f}s")
    click.echo(f"requests: {q['ok']}/{q['total']} answered, {q['failed']} failed "
               f"{q['failures'] or ''}, {q['retries']} retries on {q['retried-requests']} "
               f"requests ({q['failed-attempts'].get('timeout', 0)} stalled or timed out; "
               f"{q['retry-time-s']:.1f}s lost), {q['resumed']} resumed")
    click.echo(f"wrote {Path(output_dir) / runmod.EVAL_FILE}")
    if q["failed"]:
        click.echo(f"error: {q['failed']} requests failed after {max_attempts} attempts; the "
                   "eval was saved, and running the same command again retries only them",
                   err=True)
        sys.exit(1)


@eval_group.command("check")
@click.argument("folders", nargs=-1, required=True, type=click.Path(file_okay=False))
@click.option("--thresholds", "threshold_file", type=click.Path(dir_okay=False),
              default=DEFAULT_PATH, show_default=True)
@click.option("--model-prefix", default=None,
              help="Threshold key [default: the eval's row model-prefix, else the model name].")
@click.option("--scope", type=click.Choice([*(s.value for s in Scope), JOB]),
              default=Scope.FULL.value, show_default=True,
              help="full: judged as staging judges it, so an eval must have asked at least the "
                   "thresholds file's gsm8k-min-questions for its model (by default the whole "
                   "1,319-question test split). local: a scaled-down run (eval gsm8k --limit) "
                   "is judged on the questions it planned, and said to be scaled down. job: "
                   "each eval as its job ran (local when the job's manifest says it was scaled "
                   "down, else full), as a run's collect job judges them.")
@click.option("--dataset", type=click.Path(dir_okay=False), envvar="INFERSWEEP_EVAL_DATASET",
              default=None,
              help="The GSM8K test split (JSONL) the evals ran on, to derive their questions "
                   "and targets from [env INFERSWEEP_EVAL_DATASET; default: the local test "
                   "file each eval recorded, if it is on this machine].")
@click.option("--audit", type=click.Path(dir_okay=False), default=None,
              help="Write the per-sample audit (JSONL: each question's target, both filters' "
                   "re-scored and saved answers and verdicts, the request's outcome).")
@click.option("--summary", "summary_file", type=click.Path(dir_okay=False),
              default=lambda: os.environ.get("GITHUB_STEP_SUMMARY"),
              help="Markdown summary file [default: $GITHUB_STEP_SUMMARY].")
def check(folders, threshold_file, model_prefix, scope, dataset, audit, summary_file):
    """Pass only on evidence the check establishes itself: the questions the eval planned
    (from the test split and the recorded plan; split and targets digests match), one sample
    per question with the split's target, every request explicitly answered with a
    non-empty response, the saved scores reproduced by re-scoring the samples, both filters
    at the threshold and, with --scope full, enough questions.

    FOLDERS are eval output folders, or folders with eval folders below them."""
    from infersweep.evals import check as checkmod
    from infersweep.evals import thresholds
    from infersweep.evals.collect import find

    limits = thresholds.load(threshold_file)
    # an eval folder, or one holding eval folders below it (a run's downloaded artifacts);
    # one with none is checked as it is, so its error says what is missing
    found = []
    for f in folders:
        found += (find([f]) if Path(f).is_dir() else []) or [Path(f)]
    reports = [checkmod.check_folder(f, limits, model_prefix,
                                     scope=of_job(f) if scope == JOB else Scope(scope),
                                     dataset=dataset) for f in found]
    if audit:
        lines = b"".join(orjson.dumps({"eval": r.folder, **row}) + b"\n"
                         for r in reports for row in r.audit)
        write_atomic(audit, lines, "audit")
    ghactions.add_summary(checkmod.markdown(reports), summary_file)
    for r in reports:
        sc, rs = r.scores, r.rescored
        click.echo(f"{'PASS' if r.passed else 'FAIL'} {r.folder}: {r.model} over "
                   f"{r.coverage} (--scope {r.scope}), strict-match "
                   f"{sc['strict-match']:.4f} (re-scored {rs['strict-match']:.4f}), "
                   f"flexible-extract {sc['flexible-extract']:.4f} (re-scored "
                   f"{rs['flexible-extract']:.4f}), threshold {r.threshold.value:.2f} "
                   f"({r.threshold.source}); {r.requests.get('retries', 0)} retries, "
                   f"{r.requests.get('failed', 0)} failed requests")
        click.echo(f"  test split: {r.dataset}")
        for p in r.problems:
            click.echo(f"  {p}")
    if not all(r.passed for r in reports):
        sys.exit(1)


@eval_group.command("collect")
@click.argument("folders", nargs=-1, required=True, type=click.Path(file_okay=False))
@click.option("-o", "--output", type=click.Path(dir_okay=False), required=True,
              help="The aggregate (JSON).")
def collect(folders, output):
    """Every eval under FOLDERS as rows joinable to the benchmark rows (provenance kept)."""
    from infersweep.evals import collect as collectmod

    agg = collectmod.collect(list(folders))
    write_atomic(output, orjson.dumps(agg, option=orjson.OPT_INDENT_2) + b"\n", "aggregate")
    click.echo(f"wrote {len(agg['evals'])} eval rows to {output}")
