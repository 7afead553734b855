"""Seeded random prompts with InferenceX's length semantics.

Lengths are Uniform-int[floor(r*L), L] (InferenceX's ``--random-range-ratio``, not vLLM's).
Every request's lengths and content come from RNG streams keyed by (seed, purpose, index),
so the workload is identical whatever the number of worker processes. Without numpy the same
numbers come from :mod:`infersweep.bench.seeded` (lists instead of arrays).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from infersweep.bench import seeded
from infersweep.bench.runtime import numpy as np

DEFAULT_VOCAB = 32000
# purposes for independent RNG streams
_LENGTHS, _OFFSETS, _WARMUP, _ARRIVALS = 1, 2, 3, 4


@dataclass(frozen=True)
class Plan:
    input_lens: np.ndarray | list[int]   # int64, per request (a list without numpy)
    output_lens: np.ndarray | list[int]
    offsets: np.ndarray | list[int]      # content offset of each request's token ramp
    vocab: int

    def __len__(self) -> int:
        return len(self.input_lens)


def length_range(length: int, ratio: float) -> tuple[int, int]:
    return max(1, math.floor(ratio * length)), length


def make_plan(n: int, input_len: int, output_len: int, ratio: float, seed: int,
              vocab: int = DEFAULT_VOCAB, warmup: bool = False) -> Plan:
    purpose = _WARMUP if warmup else 0
    lo_in, hi_in = length_range(input_len, ratio)
    lo_out, hi_out = length_range(output_len, ratio)
    if np is None:
        g = seeded.Generator([seed, _LENGTHS, purpose])
        ins = g.integers(lo_in, hi_in + 1, n)
        outs = g.integers(lo_out, hi_out + 1, n)
        offs = seeded.Generator([seed, _OFFSETS, purpose]).integers(0, vocab, n)
        return Plan(ins, outs, offs, vocab)
    rng = np.random.default_rng([seed, _LENGTHS, purpose])
    lo, hi = lo_in, hi_in
    ins = rng.integers(lo, hi + 1, size=n, dtype=np.int64)
    lo, hi = lo_out, hi_out
    outs = rng.integers(lo, hi + 1, size=n, dtype=np.int64)
    offs = np.random.default_rng([seed, _OFFSETS, purpose]).integers(0, vocab, size=n)
    return Plan(ins, outs, offs, vocab)


def token_ids(plan: Plan, i: int):
    """A consecutive-id ramp (as InferenceX): distinct per request, no shared prefix."""
    n = int(plan.input_lens[i])
    if np is None:
        first = int(plan.offsets[i]) + i
        return [(first + k) % plan.vocab for k in range(n)]
    return (np.arange(n, dtype=np.int64) + int(plan.offsets[i]) + i) % plan.vocab


_WORDS = None


def pseudo_text(plan: Plan, i: int) -> str:
    """Tokenizer-free text: one pseudo-word per intended token (servers that count words agree)."""
    global _WORDS
    if _WORDS is None:
        _WORDS = [f"w{k}" for k in range(1000)]
    ids = token_ids(plan, i)
    ids = [k % 1000 for k in ids] if np is None else (ids % 1000).tolist()
    return " ".join([_WORDS[k] for k in ids])


def arrival_times(n: int, rate: float, burstiness: float, seed: int) -> list[float]:
    """Absolute send offsets (s) of an open-loop schedule: gamma inter-arrivals (1.0 = Poisson)."""
    if math.isinf(rate):
        return [0.0] * n
    if np is None:
        raise RuntimeError("an open-loop schedule needs numpy")  # runner checks this first
    rng = np.random.default_rng([seed, _ARRIVALS])
    gaps = rng.gamma(shape=burstiness, scale=1.0 / (rate * burstiness), size=n)
    gaps[0] = 0.0
    return np.cumsum(gaps).tolist()
