"""The limits no benchmark point can pass, and why: one table, which docs/results.md cites.

A value past a bound is not a fast engine but a broken client, a unit mix-up or an edited
file. The bounds are loose on purpose (several times what the fastest hardware there is could
do for the smallest model anyone benchmarks), so an honest run never meets them; they are no
regression thresholds. ``tests/unit/results/test_bounds.py`` keeps the docs' table and this
one equal.
"""

from __future__ import annotations

from dataclasses import dataclass

# Dense low-precision peak of one GPU: 50 PFLOP/s is NVIDIA's NVFP4 inference figure for
# Rubin, the fastest GPU announced; B300 gives 15 and MI355X 10 (FP4, dense).
PEAK_FLOPS_PER_GPU = 50e15
# Fewest active parameters of a model worth benchmarking: every model of the catalogs has
# 5B or more (gpt-oss-120b 5.1B, the MoE models of configs/ 10-40B).
MIN_ACTIVE_PARAMS = 1e9


@dataclass(frozen=True)
class Bound:
    name: str
    applies_to: str   # the fields, as the docs list them
    limit: float
    unit: str
    why: str

    @property
    def shown(self) -> str:
        """The limit as the docs write it (``25,000,000 tok/s/GPU``, ``0.05 ms``)."""
        text = f"{self.limit:,.0f}" if self.limit >= 1 else f"{self.limit:g}"
        return f"{text} {self.unit}"


TOKENS_PER_GPU = Bound(
    "tokens per GPU",
    "tput_per_gpu, output_tput_per_gpu, input_tput_per_gpu (the client's total and output "
    "token throughput over the point's GPUs)",
    PEAK_FLOPS_PER_GPU / (2 * MIN_ACTIVE_PARAMS), "tok/s/GPU",
    "every token, prompt or output, costs at least one forward pass: 2 FLOPs per active "
    "parameter. At 50 PFLOP/s (above any GPU's dense FP4 peak) and 1B active parameters "
    "(5x below the smallest model benchmarked), a GPU cannot process more")
TIME_PER_TOKEN = Bound(
    "time per token",
    "every TTFT, TPOT, ITL and E2EL statistic that is not 0 (mean, median, p90, p99, "
    "p99.9); so interactivity is at most 20,000 tok/s/user",
    0.05, "ms",
    "a token is a full forward pass: at least one kernel per layer of dozens of layers, "
    "microseconds each on any GPU, and the first token an HTTP round trip besides; "
    "speculative decoding accepts a few tokens per step. Published single-stream GPU "
    "records are 1,000-2,000 tok/s/user, a tenth of this")
RATE_TOLERANCE = Bound(
    "rate consistency",
    "request_throughput, output_throughput, total_token_throughput against completed, "
    "total_output_tokens, total_input_tokens + total_output_tokens over duration; per-GPU "
    "throughput against the totals over the GPUs; interactivity against 1 / TPOT; no latency "
    "longer than the duration",
    1.0, "%",
    "the client derives every rate from the same counts and duration in double precision, "
    "so they agree exactly; 1 % admits a client that rounds what it prints, nothing more")

BOUNDS = (TOKENS_PER_GPU, TIME_PER_TOKEN, RATE_TOLERANCE)

TOLERANCE = RATE_TOLERANCE.limit / 100.0
MIN_SECONDS_PER_TOKEN = TIME_PER_TOKEN.limit / 1000.0


def markdown() -> str:
    """The docs' table of bounds (docs/results.md holds exactly this)."""
    lines = ["| bound | applies to | limit | why |", "|---|---|---|---|"]
    lines += [f"| {b.name} | {b.applies_to} | {b.shown} | {b.why} |" for b in BOUNDS]
    return "\n".join(lines)
