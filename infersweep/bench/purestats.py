"""mean / median / std / percentile in pure Python, bit-for-bit as numpy computes them.

Used where numpy is missing. numpy sums float64 pairwise (blocks of up to 128 values, eight
running sums each); the population std is the mean of squared deviations from that mean; a
percentile is numpy's default "linear" method, including its two-sided interpolation (from
the lower neighbour below a weight of 0.5, from the upper one at or above it). Checked
against numpy in tests/unit/test_bench_purestats.py.
"""

from __future__ import annotations

import math

_BLOCK = 128


def _pairwise(a: list[float], lo: int, n: int) -> float:
    if n < 8:
        res = -0.0
        for i in range(lo, lo + n):
            res += a[i]
        return res
    if n <= _BLOCK:
        r = a[lo:lo + 8]
        i = 8
        while i < n - n % 8:
            for j in range(8):
                r[j] += a[lo + i + j]
            i += 8
        res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
        while i < n:
            res += a[lo + i]
            i += 1
        return res
    n2 = n // 2
    n2 -= n2 % 8
    return _pairwise(a, lo, n2) + _pairwise(a, lo + n2, n - n2)


def fsum_like_numpy(values: list[float]) -> float:
    """``np.add.reduce`` of a contiguous float64 array."""
    return _pairwise(values, 0, len(values)) if values else 0.0


def mean(values: list[float]) -> float:
    return fsum_like_numpy(values) / len(values)


def std(values: list[float]) -> float:
    m = mean(values)
    return math.sqrt(fsum_like_numpy([(x - m) * (x - m) for x in values]) / len(values))


def percentile_sorted(s: list[float], q: float) -> float:
    """numpy.percentile(s, q) (method "linear") of an already sorted list."""
    n = len(s)
    virtual = (n - 1) * (q / 100)
    if virtual >= n - 1:
        return s[-1]
    if virtual < 0:
        return s[0]
    below = math.floor(virtual)
    t = virtual - below
    a, b = s[below], s[below + 1]
    diff = b - a
    return b - diff * (1 - t) if t >= 0.5 else a + diff * t


def median_sorted(s: list[float]) -> float:
    n = len(s)
    half = n // 2
    if n % 2:
        return s[half]
    return mean([s[half - 1], s[half]])
