"""Seeded random prompts with InferenceX's length semantics.

Lengths are Uniform-int[floor(r*L), L] (InferenceX's ``--random-range-ratio``, not vLLM's).
Every request's lengths and content come from RNG streams keyed by (seed, purpose, index),
so the workload is identical whatever the number of worker processes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

DEFAULT_VOCAB = 32000
# purposes for independent RNG streams
_LENGTHS, _OFFSETS, _WARMUP, _ARRIVALS = 1, 2, 3, 4


@dataclass(frozen=True)
class Plan:
    input_lens: np.ndarray   # int64, per request
    output_lens: np.ndarray
    offsets: np.ndarray      # content offset of each request's token ramp
    vocab: int

    def __len__(self) -> int:
        return len(self.input_lens)


def length_range(length: int, ratio: float) -> tuple[int, int]:
    return max(1, math.floor(ratio * length)), length


def make_plan(n: int, input_len: int, output_len: int, ratio: float, seed: int,
              vocab: int = DEFAULT_VOCAB, warmup: bool = False) -> Plan:
    purpose = _WARMUP if warmup else 0
    rng = np.random.default_rng([seed, _LENGTHS, purpose])
    lo, hi = length_range(input_len, ratio)
    ins = rng.integers(lo, hi + 1, size=n, dtype=np.int64)
    lo, hi = length_range(output_len, ratio)
    outs = rng.integers(lo, hi + 1, size=n, dtype=np.int64)
    offs = np.random.default_rng([seed, _OFFSETS, purpose]).integers(0, vocab, size=n)
    return Plan(ins, outs, offs, vocab)


def token_ids(plan: Plan, i: int) -> np.ndarray:
    """A consecutive-id ramp (as InferenceX): distinct per request, no shared prefix."""
    n = int(plan.input_lens[i])
    return (np.arange(n, dtype=np.int64) + int(plan.offsets[i]) + i) % plan.vocab


_WORDS = None


def pseudo_text(plan: Plan, i: int) -> str:
    """Tokenizer-free text: one pseudo-word per intended token (servers that count words agree)."""
    global _WORDS
    if _WORDS is None:
        _WORDS = [f"w{k}" for k in range(1000)]
    ids = token_ids(plan, i) % 1000
    return " ".join([_WORDS[k] for k in ids.tolist()])


def arrival_times(n: int, rate: float, burstiness: float, seed: int) -> np.ndarray:
    """Absolute send offsets (s) of an open-loop schedule: gamma inter-arrivals (1.0 = Poisson)."""
    if math.isinf(rate):
        return np.zeros(n)
    rng = np.random.default_rng([seed, _ARRIVALS])
    gaps = rng.gamma(shape=burstiness, scale=1.0 / (rate * burstiness), size=n)
    gaps[0] = 0.0
    return np.cumsum(gaps)
