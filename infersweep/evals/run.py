"""``eval gsm8k``: run lm-eval's GSM8K task through our transport and save everything.

An eval's folder holds, when it finished:

- ``eval.json``: the summary ``eval check`` and ``eval collect`` read (scores of both filters,
  the filters' and metric's definitions, request counts, retries, failures, provenance) and
  the evidence ``eval check`` derives the expected questions from: the test split's size,
  content digest and file, the question plan (``--limit``) and the targets' digest
  (:mod:`infersweep.evals.plan`);
- ``samples.jsonl``: one line per question (prompt, response, target, each filter's extracted
  answer and verdict, the request's record);
- ``lm-eval-results.json``: lm-eval's own results (task config, stderr, versions);
- ``requests.jsonl``: the request journal, written as requests finish (see client.py), which
  makes a run that was stopped resumable.

The three result files are written whole (temporary file, then rename), ``eval.json`` last,
so a folder with ``eval.json`` is a finished eval.
"""

from __future__ import annotations

import contextlib
import io
import logging
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from infersweep.atomic import check_writable, write_atomic
from infersweep.evals import plan, rescore, task, testset
from infersweep.evals import provenance as prov
from infersweep.evals.client import EvalClient, GenSettings, journal_path
from infersweep.evals.transport import Endpoint, RetryPolicy

EVAL_VERSION = 2  # 2: the dataset, plan and targets-sha256 evidence
EVAL_FILE = "eval.json"
SAMPLES_FILE = "samples.jsonl"
LMEVAL_FILE = "lm-eval-results.json"


@dataclass
class EvalOptions:
    endpoint: Endpoint
    base_url: str
    settings: GenSettings
    policy: RetryPolicy
    concurrency: int
    out_dir: Path
    test_file: str | None = None
    train_file: str | None = None
    num_fewshot: int = 5
    limit: int | None = None
    fewshot_as_multiturn: bool = True
    show_progress: bool = True
    provenance: dict = field(default_factory=dict)


def _json(obj) -> bytes:
    return orjson.dumps(obj, option=orjson.OPT_INDENT_2 | orjson.OPT_SERIALIZE_NUMPY
                        | orjson.OPT_NON_STR_KEYS, default=str) + b"\n"


def _git_describe_quietly() -> str | None:
    """lm-eval's record of the working folder's commit, asked without git's stderr."""
    try:
        out = subprocess.run(["git", "describe", "--always"], capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode != 0:
        return None
    return out.stdout.decode().strip() or None


@contextlib.contextmanager
def _quiet_git_hash(evaluator):
    """lm-eval records ``git describe`` of the working folder with git's stderr left on ours,
    so outside a repository (every job's folder) each eval printed git's "fatal: not a git
    repository" into the benchmark log. Same question, asked quietly, for this call only."""
    original = evaluator.get_git_commit_hash
    evaluator.get_git_commit_hash = _git_describe_quietly
    try:
        yield
    finally:
        evaluator.get_git_commit_hash = original


def run(opts: EvalOptions) -> dict:
    out = opts.out_dir
    for name in (EVAL_FILE, SAMPLES_FILE, LMEVAL_FILE):
        check_writable(out / name, "eval output")
    local = opts.test_file is not None
    if local:
        task.offline_env()
    import lm_eval  # the eval extra; imported late so `infersweep --help` stays light
    from lm_eval import evaluator
    from lm_eval.tasks import TaskManager

    from infersweep.evals.model import TransportLM

    if local:
        task_name = task.write_local_task(out / "task", opts.test_file, opts.train_file)
        manager = TaskManager(include_path=str(out / "task"), verbosity="ERROR")
    else:
        task_name, manager = task.BUILTIN_TASK, TaskManager(verbosity="ERROR")
    client = EvalClient(opts.endpoint, opts.settings, opts.policy, opts.concurrency,
                        journal_path(out), show_progress=opts.show_progress)
    lm = TransportLM(client)
    t0 = time.monotonic()
    logging.getLogger("lm-eval").setLevel(logging.ERROR)
    # lm-eval prints its table to stdout
    with contextlib.redirect_stdout(io.StringIO()), _quiet_git_hash(evaluator):
        # the task object itself, so that the split it evaluated can be digested afterwards
        task_obj = manager.load([task_name])["tasks"][task_name]
        results = lm_eval.simple_evaluate(
            model=lm, tasks=[task_obj], limit=opts.limit,
            # None keeps the task's own 5 (passing 5 only makes lm-eval log an override)
            num_fewshot=None if opts.num_fewshot == 5 else opts.num_fewshot,
            log_samples=True, task_manager=manager, apply_chat_template=opts.endpoint.chat,
            fewshot_as_multiturn=opts.endpoint.chat and opts.fewshot_as_multiturn,
            bootstrap_iters=1000, verbosity="ERROR")
    duration = time.monotonic() - t0
    split = testset.from_docs(task_obj.eval_docs)
    samples, summary = summarise(results, task_name, client.records, opts, duration, split)
    write_atomic(out / LMEVAL_FILE, _json({k: v for k, v in results.items() if k != "samples"}),
                 "eval output")
    write_atomic(out / SAMPLES_FILE, b"".join(orjson.dumps(s) + b"\n" for s in samples),
                 "eval output")
    write_atomic(out / EVAL_FILE, _json(summary), "eval output")
    return summary


def summarise(results: dict, task_name: str, records: list[dict], opts: EvalOptions,
              duration: float, split: list[testset.Row]) -> tuple[list[dict], dict]:
    """The samples file's lines and ``eval.json``; ``split``: the test split evaluated."""
    cfg = results["configs"][task_name]
    filters = {f["name"]: rescore.filter_spec(f) for f in cfg["filter_list"]}
    metric = next(m for m in cfg["metric_list"] if m["metric"] == "exact_match")
    metric = {k: metric.get(k) for k in ("ignore_case", "ignore_punctuation",
                                         "regexes_to_ignore")}
    by_doc: dict[int, dict] = {}
    for s in results["samples"][task_name]:
        d = by_doc.setdefault(s["doc_id"], {
            "doc_id": s["doc_id"], "prompt": s["arguments"][0][0] if s["arguments"] else None,
            "target": s["target"], "response": s["resps"][0][0] if s["resps"] else "",
            "extracted": {}, "exact_match": {}})
        d["extracted"][s["filter"]] = s["filtered_resps"][0]
        d["exact_match"][s["filter"]] = float(s["exact_match"])
    samples = [by_doc[k] for k in sorted(by_doc)]
    rec_by_doc = {r["doc_id"]: r for r in records}
    for s in samples:
        rec = rec_by_doc.get(s["doc_id"])
        s["request"] = None if rec is None else {k: rec.get(k) for k in (
            "ok", "error_class", "error", "retries", "retry_time_s", "attempts", "ttft_s",
            "e2el_s", "output_tokens", "resumed")}
    res = results["results"][task_name]
    scores = {name: {"exact_match": float(res[f"exact_match,{name}"]),
                     "stderr": _num(res.get(f"exact_match_stderr,{name}"))} for name in filters}
    summary = {
        "eval-version": EVAL_VERSION, "task": "gsm8k", "lm-eval-task": task_name,
        "lm-eval-version": results.get("lm_eval_version"),
        "model": opts.settings.model, "base-url": opts.base_url,
        "api": "chat" if opts.endpoint.chat else "completions",
        "num-fewshot": opts.num_fewshot, "fewshot-as-multiturn":
            opts.endpoint.chat and opts.fewshot_as_multiturn,
        "max-completion-tokens": opts.settings.max_completion_tokens,
        "concurrency": opts.concurrency, "limit": opts.limit,
        "data": "local" if opts.test_file else "hub",
        "n-samples": len(samples), "scores": scores, "filters": filters, "metric": metric,
        "requests": request_stats(records), "duration-s": round(duration, 3),
        "samples-file": SAMPLES_FILE, "provenance": prov.normalise(opts.provenance),
        **plan.record(len(split), opts.limit, testset.digest_rows(split),
                      None if opts.test_file is None else str(Path(opts.test_file).resolve()),
                      testset.digest_targets((s["doc_id"], s["target"]) for s in samples)),
    }
    return samples, summary


def _num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def request_stats(records: list[dict]) -> dict:
    failures: dict[str, int] = {}
    retry_classes: dict[str, int] = {}
    retried, retries, retry_time = 0, 0, 0.0
    for r in records:
        if not r["ok"]:
            failures[r["error_class"]] = failures.get(r["error_class"], 0) + 1
        if r.get("resumed"):
            continue
        if r["retries"]:
            retried += 1
            retries += r["retries"]
            retry_time += r["retry_time_s"]
            for a in r["attempts"]:
                if a["error_class"]:
                    retry_classes[a["error_class"]] = retry_classes.get(a["error_class"], 0) + 1
    return {"total": len(records), "ok": sum(1 for r in records if r["ok"]),
            "failed": sum(failures.values()), "failures": dict(sorted(failures.items())),
            "resumed": sum(1 for r in records if r.get("resumed")),
            "retried-requests": retried, "retries": retries,
            "retry-time-s": round(retry_time, 3),
            "failed-attempts": dict(sorted(retry_classes.items()))}
