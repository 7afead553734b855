"""Concurrency points of a search-space entry: one routine for every path."""

from __future__ import annotations


def conc_points(ss: dict, step: int = 2) -> list[int]:
    """The concurrencies a search-space entry declares, in order.

    A range multiplies by ``step`` from ``conc-start`` and always ends on ``conc-end``
    (4..48 step 2 -> 4, 8, 16, 32, 48); a list is used as given.
    """
    if "conc-list" in ss:
        return list(ss["conc-list"])
    start, end = ss["conc-start"], ss["conc-end"]
    points = []
    value = start
    while value < end:
        points.append(value)
        value *= step
    points.append(end)
    return points


def within(points: list[int], lo: int | None, hi: int | None, only: set[int] | None = None):
    """Points inside [lo, hi] (bounds optional), and in ``only`` when given."""
    return [c for c in points
            if (lo is None or c >= lo) and (hi is None or c <= hi)
            and (only is None or c in only)]
