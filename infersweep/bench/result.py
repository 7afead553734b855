"""The result JSON: InferenceX's keys first, in its order, then infersweep's extras."""

from __future__ import annotations

import math
import time

from infersweep import __version__
from infersweep.atomic import write_atomic
from infersweep.bench import runtime


def default_filename(backend: str, rate: float, concurrency: int | None, model: str,
                     date: str) -> str:
    rate_s = "inf" if math.isinf(rate) else f"{rate:g}"
    conc = f"-concurrency{concurrency}" if concurrency is not None else ""
    return f"{backend}-{rate_s}qps{conc}-{model.split('/')[-1]}-{date}.json"


def build(*, args, summary: dict, input_lens, output_lens, start_unix: float, end_unix: float,
          date: str, extras: dict) -> dict:
    out = {
        "date": date,
        "backend": args.backend,
        "model_id": args.model,
        "tokenizer_id": args.tokenizer or args.model,
        "best_of": 1,
        "num_prompts": args.num_prompts,
    }
    for item in args.metadata:
        k, _, v = item.partition("=")
        out[k] = v
    out["request_rate"] = "inf" if math.isinf(args.request_rate) else args.request_rate
    out["burstiness"] = args.burstiness
    out["max_concurrency"] = args.max_concurrency
    out["duration"] = summary["duration"]
    out["benchmark_start_time_unix"] = start_unix
    out["benchmark_end_time_unix"] = end_unix
    for key in ("completed", "total_input_tokens", "total_output_tokens", "request_throughput",
                "request_goodput:", "output_throughput", "total_token_throughput"):
        out[key] = summary[key]
    out["input_lens"] = list(input_lens)
    out["output_lens"] = list(output_lens)
    for key, val in summary.items():
        if key.endswith("_ms") and "chunk_gap" not in key:
            out[key] = val
    # extras (not in InferenceX): keep existing consumers unaffected by appending only
    out["failed"] = summary["failed"]
    out.update({k: v for k, v in summary.items() if "chunk_gap" in k})
    out["infersweep"] = {"version": __version__, **extras}
    return out


def write(path: str, obj: dict) -> None:
    """Write the result JSON atomically (a crash never leaves half a result)."""
    write_atomic(path, runtime.dumps_indented(obj))


def now_date() -> str:
    return time.strftime("%Y%m%d-%H%M%S")
