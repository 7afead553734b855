"""The two numbers of a point the charts plot (throughput per GPU against interactivity), read
as numbers. The frontiers are drawn by the pages' scripts (``frontier`` in explorer-core.js)."""

from __future__ import annotations

import math

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
