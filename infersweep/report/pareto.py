"""The Pareto frontier of throughput per GPU against interactivity (both higher is better)."""

from __future__ import annotations

import math
from collections.abc import Iterable

X = "median_intvty"   # tokens/s per user
Y = "tput_per_gpu"    # tokens/s per GPU


def number(value) -> float | None:
    """A finite number as float (a store may hand back Decimal or int), else None."""
    if value is None or isinstance(value, bool | str):
        return None
    try:
        f = float(value)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def plottable(point: dict) -> bool:
    """A point with both numbers, from a complete measurement (a store may say 1 for true)."""
    return (bool(point.get("successful", True)) and number(point.get(X)) is not None
            and number(point.get(Y)) is not None)


def frontier(points: Iterable[dict]) -> list[dict]:
    """The points no other point beats on both axes, by rising interactivity.

    A point is dominated when another one is at least as good on both axes and better on
    one; of exact ties the first given is kept."""
    ordered = sorted((p for p in points if plottable(p)),
                     key=lambda p: (-number(p[X]), -number(p[Y])))
    out: list[dict] = []
    best_y = float("-inf")
    for p in ordered:
        if number(p[Y]) > best_y:
            out.append(p)
            best_y = number(p[Y])
    out.reverse()
    return out
