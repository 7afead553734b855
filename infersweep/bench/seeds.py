"""Which seed a run's prompts come from: given, or fresh for each run and each point.

The same prompts sent again are served from the engine's prefix cache (on by default in vLLM
and SGLang), so TTFT would measure cache hits, not prefill. Without ``--seed`` the seed is
derived from the run id and the point, so the points of one sweep (which differ only in
concurrency) and a re-run each send prompts of their own. The run id is ``--run-id``, else
``$INFERSWEEP_RUN_ID`` (the sweep's executors set it for every job), else random. The point
is the client's own workload: its options and result file name. The seed is written into the
result; ``--seed N`` gives exactly those prompts again (and, as before, ``--seed 0`` the
prompts of a result that recorded seed 0).
"""

from __future__ import annotations

import hashlib
import math
import secrets
from dataclasses import dataclass

RUN_ID_ENV = "INFERSWEEP_RUN_ID"
SEED_BITS = 32  # one 32-bit word: numpy and infersweep.bench.seeded take it the same way


@dataclass(frozen=True)
class Seed:
    value: int
    origin: str             # "option" (--seed), "run" (--run-id / $INFERSWEEP_RUN_ID), "random"
    run_id: str | None = None
    point: str | None = None

    def describe(self) -> dict:
        out: dict = {"seed": self.value, "seed_origin": self.origin}
        if self.origin != "option":
            out.update(run_id=self.run_id, point=self.point)
        return out


def run_tag(run_id: str, attempt: int) -> str:
    """The run id an executor gives the client: the sweep's run and attempt (a re-run of
    missing points is an attempt of its own, with prompts of its own)."""
    return f"{run_id}-a{int(attempt)}"


def point_label(*, endpoint: str, model: str, input_len: int, output_len: int,
                range_ratio: float, num_prompts: int, num_warmups: int,
                max_concurrency: int | None, request_rate: float,
                result_filename: str | None) -> str:
    """What one point of a run is: the workload's options (and the result file's name, which
    in a sweep names the recipe and the concurrency)."""
    rate = "inf" if math.isinf(request_rate) else f"{request_rate:g}"
    parts = [f"endpoint={endpoint}", f"model={model}", f"input={input_len}",
             f"output={output_len}", f"ratio={range_ratio:g}", f"prompts={num_prompts}",
             f"warmups={num_warmups}", f"concurrency={max_concurrency or 'unlimited'}",
             f"rate={rate}"]
    if result_filename:
        parts.append(f"file={result_filename}")
    return " ".join(parts)


def derive(run_id: str, point: str) -> int:
    digest = hashlib.sha256(f"infersweep-prompts\0{run_id}\0{point}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> (64 - SEED_BITS)


def resolve(seed: int | None, run_id: str | None, point: str) -> Seed:
    """The run's seed: ``seed`` as given, else derived from ``run_id`` (random when None) and
    ``point``."""
    if seed is not None:
        return Seed(seed, "option")
    if run_id:
        return Seed(derive(run_id, point), "run", run_id, point)
    fresh = f"random-{secrets.token_hex(8)}"
    return Seed(derive(fresh, point), "random", fresh, point)
