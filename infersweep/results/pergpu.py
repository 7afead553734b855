"""Token throughput per GPU: one formula for processing a point and for checking a row.

Single node: total, output and (total − output) over the TP × PP × PCP GPUs. Multi-node
(disaggregated): total over prefill + decode GPUs, output over the decode GPUs (all of them
when there are none), (total − output) over the prefill GPUs.
"""

from __future__ import annotations

FIELDS = ("tput_per_gpu", "output_tput_per_gpu", "input_tput_per_gpu")


def divisors(*, multinode: bool, prefill: int, decode: int) -> dict[str, int]:
    """The GPUs each per-GPU field divides by (``prefill``/``decode``: the point's GPU
    counts; single node: 0 and the total)."""
    if multinode:
        return {"tput_per_gpu": prefill + decode,
                "output_tput_per_gpu": decode if decode > 0 else prefill + decode,
                "input_tput_per_gpu": prefill}
    return dict.fromkeys(FIELDS, decode)


def per_gpu(total: float, output: float, *, multinode: bool, prefill: int,
            decode: int) -> dict[str, float]:
    n = divisors(multinode=multinode, prefill=prefill, decode=decode)
    return {"tput_per_gpu": total / n["tput_per_gpu"],
            "output_tput_per_gpu": output / n["output_tput_per_gpu"],
            "input_tput_per_gpu": (total - output) / n["input_tput_per_gpu"]}


def gpu_counts(row: dict) -> tuple[int, int] | None:
    """(prefill, decode) GPUs of a processed row, or None when it does not say."""
    def whole(v) -> bool:
        return isinstance(v, int) and not isinstance(v, bool) and v >= 0

    if row.get("is_multinode"):
        p, d = row.get("num_prefill_gpu"), row.get("num_decode_gpu")
        return (p, d) if whole(p) and whole(d) and p > 0 else None
    sizes = [row.get("tp"), row.get("pp", 1), row.get("pcp_size", 1)]
    if not all(whole(v) for v in sizes):
        return None
    n = sizes[0] * (sizes[1] or 1) * (sizes[2] or 1)
    return (0, n) if n > 0 else None
