"""A seeded synthetic Weka trace corpus with the prefix structure of a coding agent.

Each trace is one agent session. Every call starts with the same system/tool prefix; a
call's hash ids are the previous call's, then the blocks of the previous answer, then new
user or tool-result blocks (the context grows turn by turn). When the context would pass
``max_context`` it is compacted: the prefix stays, a short summary and the new blocks
follow, and the old history is gone from the cache's point of view. Now and then a turn
spawns a subagent: its calls start with the parent's prefix blocks, then go their own way;
the parent's next call waits for it and carries its result.

Times are consistent the way the client replays them: a call starts ``think_time`` after
the previous one ended (``t + api_time``), and a parent call after a subagent starts after
the subagent's last call ended. ``in`` is always a whole number of blocks.

The same parameters and seed give byte-identical files (Python's ``random.Random`` with a
text seed is stable across runs and versions). :func:`write_corpus` writes to a temporary
directory beside the target and renames it into place, so a reader never sees half a
corpus.
"""

from __future__ import annotations

import math
import os
import random
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import orjson

from infersweep.atomic import OutputError, check_writable
from infersweep.diagnostics import Diagnostic, InputError

Range = tuple[float, float]


def parse_range(text: str, *, integer: bool = True) -> Range:
    """``"N"`` or ``"N-M"`` (N <= M, not negative) as (low, high)."""
    parts = str(text).strip().split("-")
    conv = int if integer else float
    try:
        if len(parts) == 1:
            low = high = conv(parts[0])
        elif len(parts) == 2:
            low, high = conv(parts[0]), conv(parts[1])
        else:
            raise ValueError
    except ValueError:
        kind = "whole numbers" if integer else "numbers"
        raise ValueError(f"'{text}' is not N or N-M with {kind}") from None
    if low < 0 or high < low:
        raise ValueError(f"'{text}': the range must be N-M with 0 <= N <= M")
    if not (math.isfinite(low) and math.isfinite(high)):
        raise ValueError(f"'{text}' is not finite")
    return low, high


@dataclass(frozen=True)
class GenParams:
    traces: int = 8
    turns: Range = (6, 12)
    seed: int = 0
    block_size: int = 64
    first_context: Range = (1024, 4096)  # tokens of the first call, prefix included
    system_tokens: int = 512  # the prefix every call of a trace starts with
    context_growth: Range = (128, 1024)  # new user/tool tokens per turn
    output_tokens: Range = (32, 512)  # drawn log-uniformly
    think_time: Range = (0.5, 4.0)  # seconds between a call's end and the next start
    subagents: float = 0.15  # chance that a turn spawns a subagent
    subagent_turns: Range = (2, 4)
    max_context: int = 32768  # compaction beyond this many input tokens
    prefill_tokens_per_s: float = 20000.0  # recorded api_time = in/prefill + out/decode
    decode_tokens_per_s: float = 100.0
    model: str = "synthetic-coder"

    def problems(self) -> list[str]:
        out = []
        if self.traces < 1:
            out.append("--traces must be at least 1")
        if self.turns[0] < 1:
            out.append("--turns must be at least 1")
        if self.block_size < 1:
            out.append("--block-size must be at least 1")
        if self.output_tokens[0] < 1:
            out.append("--output-tokens must be at least 1 (the client sends max_tokens >= 1)")
        if self.first_context[0] <= self.system_tokens:
            out.append("--first-context must be more than --system-tokens (the first call "
                       "needs a user message after the prefix)")
        if self.max_context <= self.first_context[1]:
            out.append("--max-context must be more than --first-context")
        if not 0 <= self.subagents <= 1:
            out.append("--subagents is a probability between 0 and 1")
        if self.subagent_turns[0] < 1:
            out.append("--subagent-turns must be at least 1")
        if self.prefill_tokens_per_s <= 0 or self.decode_tokens_per_s <= 0:
            out.append("token rates must be positive")
        return out


class _Session:
    """One trace being written: its random stream and its hash-id counter."""

    def __init__(self, params: GenParams, index: int):
        self.p = params
        self.rng = random.Random(f"infersweep-tracegen:{params.seed}:{index}")
        self.next_id = 1
        self.id = f"synthetic-{params.seed}-{index:04d}"

    def blocks(self, tokens: float) -> list[int]:
        n = max(1, math.ceil(tokens / self.p.block_size))
        ids = list(range(self.next_id, self.next_id + n))
        self.next_id += n
        return ids

    def draw(self, r: Range) -> int:
        return self.rng.randint(int(r[0]), int(r[1]))

    def draw_log(self, r: Range) -> int:
        low, high = max(1.0, r[0]), max(1.0, r[1])
        return int(round(math.exp(self.rng.uniform(math.log(low), math.log(high)))))

    def draw_seconds(self, r: Range) -> float:
        return round(self.rng.uniform(r[0], r[1]), 3)

    def call(self, t: float, ids: list[int], out: int, think: float, stop: str) -> dict:
        n_in = len(ids) * self.p.block_size
        api = round(n_in / self.p.prefill_tokens_per_s + out / self.p.decode_tokens_per_s, 3)
        return {"t": round(t, 3), "type": "n", "model": self.p.model, "in": n_in, "out": out,
                "hash_ids": ids, "stop": stop, "api_time": api, "think_time": think}

    def grow(self, ids: list[int], prefix: list[int], out: int, new_tokens: int) -> list[int]:
        """The next call's context: history, the answer, new input; compacted when long."""
        nxt = ids + self.blocks(out) + self.blocks(new_tokens)
        if len(nxt) * self.p.block_size > self.p.max_context:
            summary = self.blocks(2 * self.p.block_size)
            nxt = prefix + summary + self.blocks(new_tokens)
        return nxt


def _subagent(s: _Session, prefix: list[int], spawn_t: float, n: int) -> tuple[dict, float]:
    """A subagent spawned at ``spawn_t``, and the time its last call ends."""
    p = s.p
    ids = prefix + s.blocks(s.draw(p.context_growth))
    t = spawn_t
    calls = []
    turns = s.draw(p.subagent_turns)
    for k in range(turns):
        out = s.draw_log(p.output_tokens)
        think = 0.0 if k == 0 else s.draw_seconds(p.think_time)
        t += think
        c = s.call(t, ids, out, think, "end_turn" if k == turns - 1 else "tool_use")
        calls.append(c)
        t = c["t"] + c["api_time"]
        if k < turns - 1:
            ids = s.grow(ids, prefix, out, s.draw(p.context_growth))
    end = round(t, 3)
    entry = {"t": round(spawn_t, 3), "type": "subagent", "agent_id": f"agent_{n:03d}",
             "subagent_type": "Explore", "status": "completed",
             "duration_ms": int(round((end - spawn_t) * 1000)),
             "total_tokens": sum(c["in"] + c["out"] for c in calls),
             "tool_use_count": turns - 1, "requests": calls, "models": [p.model]}
    return entry, end


def generate_trace(params: GenParams, index: int) -> dict:
    """Trace ``index`` of the corpus (independent of the others)."""
    s = _Session(params, index)
    p = params
    prefix = s.blocks(p.system_tokens) if p.system_tokens > 0 else []
    first = s.draw(p.first_context)
    ids = prefix + s.blocks(first - len(prefix) * p.block_size)
    turns = s.draw(p.turns)
    requests: list[dict] = []
    t = 0.0
    think = 0.0
    n_sub = 0
    for turn in range(turns):
        out = s.draw_log(p.output_tokens)
        last = turn == turns - 1
        c = s.call(t, ids, out, think, "end_turn" if last else "tool_use")
        requests.append(c)
        if last:
            break
        end = c["t"] + c["api_time"]
        think = s.draw_seconds(p.think_time)
        new_tokens = s.draw(p.context_growth)
        if s.rng.random() < p.subagents:
            n_sub += 1
            entry, sub_end = _subagent(s, prefix, end + s.draw_seconds((0.0, 0.5)), n_sub)
            requests.append(entry)
            end = max(end, sub_end)
            new_tokens += sum(r["out"] for r in entry["requests"][-1:])  # its answer
        t = end + think
        ids = s.grow(ids, prefix, out, new_tokens)
    return {"id": s.id, "models": [p.model], "block_size": p.block_size,
            "hash_id_scope": "local", "requests": requests}


def trace_file_name(index: int) -> str:
    return f"trace-{index:04d}.json"


def _swap_in(tmp: Path, out: Path, force: bool) -> None:
    if out.exists():
        if not force:
            raise InputError(Diagnostic(str(out), 0, 0, "already exists",
                                        "pass --force to replace it, or choose another --out",
                                        "output-path"))
        old = out.with_name(f".{out.name}.old-{os.getpid()}")
        os.replace(out, old)
        os.replace(tmp, out)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(tmp, out)


def write_corpus(params: GenParams, out: str | Path, *, force: bool = False,
                 progress: Callable[[int], None] | None = None) -> list[Path]:
    """Write the corpus as ``out/trace-NNNN.json``; the list of files written."""
    problems = params.problems()
    if problems:
        raise InputError([Diagnostic("<options>", 0, 0, m, rule="trace-generate")
                          for m in problems])
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise OutputError(out, "it is a file, not a directory")
    if out.exists() and not force:
        _swap_in(out, out, force=False)  # the same refusal, before any work
    check_writable(out / trace_file_name(0), "trace corpus")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        tmp.mkdir()
        for i in range(params.traces):
            data = orjson.dumps(generate_trace(params, i)) + b"\n"
            (tmp / trace_file_name(i)).write_bytes(data)
            if progress:
                progress(i + 1)
        _swap_in(tmp, out, force)
    except OSError as exc:
        raise OutputError.from_os_error(out, exc, "trace corpus") from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return [out / trace_file_name(i) for i in range(params.traces)]
