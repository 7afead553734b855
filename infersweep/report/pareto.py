"""The Pareto frontier of throughput per GPU against interactivity (both higher is better)."""

from __future__ import annotations

from collections.abc import Iterable

X = "median_intvty"   # tokens/s per user
Y = "tput_per_gpu"    # tokens/s per GPU


def plottable(point: dict) -> bool:
    """A point with both numbers, from a complete measurement."""
    return (point.get("successful", True) is True and isinstance(point.get(X), int | float)
            and isinstance(point.get(Y), int | float))


def frontier(points: Iterable[dict]) -> list[dict]:
    """The points no other point beats on both axes, by rising interactivity.

    A point is dominated when another one is at least as good on both axes and better on
    one; of exact ties the first given is kept."""
    ordered = sorted((p for p in points if plottable(p)), key=lambda p: (-p[X], -p[Y]))
    out: list[dict] = []
    best_y = float("-inf")
    for p in ordered:
        if p[Y] > best_y:
            out.append(p)
            best_y = p[Y]
    out.reverse()
    return out
