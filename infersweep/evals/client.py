"""All of an eval's generation requests, concurrently, with a journal that makes a run resumable.

The journal (``requests.jsonl`` in the eval's output folder) gets one line per finished
request as it finishes: the request's key, its answer or failure, and every attempt. A run
started again with the same output folder reuses the answers of the lines whose request
succeeded (same key: same endpoint kind, model, prompt and generation settings) and sends
only the rest. A line cut short by a crash is ignored.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

import orjson

from infersweep import progress
from infersweep.atomic import OutputError
from infersweep.evals.answercap import AnswerLimits
from infersweep.evals.transport import (
    DEFAULT_MAX_TOKENS,
    Answer,
    Endpoint,
    EvalTransport,
    RetryPolicy,
)


@dataclass(frozen=True)
class GenSettings:
    model: str
    max_completion_tokens: int = DEFAULT_MAX_TOKENS
    temperature: float = 0.0
    seed: int | None = None


def build_body(settings: GenSettings, chat: bool, context, stop: list[str]) -> dict:
    """The OpenAI request body for one prompt (``context``: text, or chat messages)."""
    body: dict = {"model": settings.model, "stream": True,
                  "stream_options": {"include_usage": True},
                  "max_tokens": settings.max_completion_tokens,
                  "temperature": settings.temperature}
    if chat:
        body["messages"] = context
        # chat's current name for the limit; max_tokens stays for engines that honour only
        # it (transformers serve ignores max_completion_tokens and answers 1,024 tokens)
        body["max_completion_tokens"] = settings.max_completion_tokens
    else:
        # the completions API knows only max_tokens: an engine that checks fields refuses
        # max_completion_tokens there (transformers serve answers HTTP 422)
        body["prompt"] = context
    stop = [s for s in stop if s][:4]  # OpenAI accepts at most four stop sequences
    if stop:
        body["stop"] = stop
    if settings.seed is not None:
        body["seed"] = settings.seed
    return body


def request_key(body: dict) -> str:
    return hashlib.sha256(orjson.dumps(body, option=orjson.OPT_SORT_KEYS)).hexdigest()


def read_journal(path: Path) -> dict[str, dict]:
    """Successful records by key (the newest wins); unreadable lines are skipped."""
    done: dict[str, dict] = {}
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return done
    except OSError as exc:
        raise OutputError.from_os_error(path, exc, "request journal") from None
    for line in raw.splitlines():
        try:
            rec = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue  # the last line of a run that was killed mid-write
        if isinstance(rec, dict) and rec.get("ok") and isinstance(rec.get("key"), str) \
                and isinstance(rec.get("text"), str):
            done[rec["key"]] = rec
    return done


class Journal:
    def __init__(self, path: Path):
        self.path = path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.fh = open(path, "ab")  # noqa: SIM115 - held open for the whole run
        except OSError as exc:
            raise OutputError.from_os_error(path, exc, "request journal") from None

    def add(self, rec: dict) -> None:
        self.fh.write(orjson.dumps(rec) + b"\n")
        self.fh.flush()

    def close(self) -> None:
        self.fh.close()


class EvalClient:
    """Turns lm-eval's (context, gen kwargs) pairs into answers; keeps every record."""

    def __init__(self, endpoint: Endpoint, settings: GenSettings, policy: RetryPolicy,
                 concurrency: int, journal_path: Path, show_progress: bool = True):
        self.ep = endpoint
        self.settings = settings
        self.policy = policy
        self.concurrency = concurrency
        self.journal_path = journal_path
        self.show_progress = show_progress
        self.records: list[dict] = []  # one per request, in lm-eval's order
        self.resumed = 0
        self.doc_ids: list = []

    def generate(self, items: list[tuple[object, list[str], int | None]]) -> list[str]:
        bodies = [build_body(self.settings, self.ep.chat, ctx, stop) for ctx, stop, _ in items]
        self.doc_ids = [d for _, _, d in items]
        try:
            import uvloop

            runner = asyncio.Runner(loop_factory=uvloop.new_event_loop)
        except ImportError:  # pragma: no cover - uvloop is a core dependency on Linux
            runner = asyncio.Runner()
        with runner:
            return runner.run(self._all(bodies))

    async def _all(self, bodies: list[dict]) -> list[str]:
        done = read_journal(self.journal_path)
        keys = [request_key(b) for b in bodies]
        out: list[str | None] = [None] * len(bodies)
        recs: list[dict | None] = [None] * len(bodies)
        todo = []
        for i, k in enumerate(keys):
            if k in done:
                rec = dict(done[k], index=i, doc_id=self.doc_ids[i], resumed=True)
                out[i], recs[i] = rec["text"], rec
            else:
                todo.append(i)
        self.resumed = len(bodies) - len(todo)
        journal = Journal(self.journal_path)
        sem = asyncio.Semaphore(self.concurrency)
        counts = {"ok": self.resumed, "failed": 0}
        try:
            with progress.bar(len(bodies), "eval requests", enabled=self.show_progress) as bar:
                bar.update(counts["ok"])
                limits = AnswerLimits(self.settings.max_completion_tokens)
                async with EvalTransport(self.ep, self.policy, limits) as tr:
                    async def one(i: int) -> None:
                        async with sem:
                            ans: Answer = await tr.send(orjson.dumps(bodies[i]))
                        rec = {"key": keys[i], "index": i, "doc_id": self.doc_ids[i], **ans.record()}
                        journal.add(rec)
                        out[i], recs[i] = ans.text, rec
                        counts["ok" if ans.ok else "failed"] += 1
                        bar.update(counts["ok"], failed=counts["failed"])

                    await asyncio.gather(*(one(i) for i in todo))
        finally:
            journal.close()
        self.records = [r for r in recs if r is not None]
        return [o or "" for o in out]


def journal_path(out_dir: str | os.PathLike) -> Path:
    return Path(out_dir) / "requests.jsonl"
