"""numpy's default generator (SeedSequence + PCG64 + ``integers``) in pure Python.

The workload's lengths and offsets come from ``numpy.random.default_rng([seed, ...])``. Where
numpy is missing (an engine container's bare interpreter) this module draws the same numbers,
so the same seed gives the same workload with or without numpy. Written from the published
algorithms (O'Neill's PCG XSL-RR 128/64, the SeedSequence hash mixing, Lemire's bounded
integers) and checked against numpy in tests/unit/test_bench_seeded.py.
"""

from __future__ import annotations

from itertools import cycle

_M32 = 0xFFFFFFFF
_M64 = (1 << 64) - 1
_M128 = (1 << 128) - 1
_POOL = 4
_INIT_A, _MULT_A = 0x43B0D7E5, 0x931E8875
_INIT_B, _MULT_B = 0x8B51F9DD, 0x58F38DED
_MIX_L, _MIX_R = 0xCA01F9DD, 0x4973F715
_PCG_MULT = (2549297995355413924 << 64) + 4865540595714422341


def _words(value: int) -> list[int]:
    """A non-negative int as little-endian 32-bit words (0 is one zero word)."""
    if value < 0:
        raise ValueError("seed entropy must be non-negative")
    out = [value & _M32]
    value >>= 32
    while value:
        out.append(value & _M32)
        value >>= 32
    return out


class _Hash:
    def __init__(self, const: int, mult: int):
        self.const, self.mult = const, mult

    def __call__(self, value: int) -> int:
        value ^= self.const
        self.const = (self.const * self.mult) & _M32
        value = (value * self.const) & _M32
        return value ^ (value >> 16)


def _mix(x: int, y: int) -> int:
    r = (_MIX_L * x - _MIX_R * y) & _M32
    return r ^ (r >> 16)


def seed_state(entropy: list[int] | int, n_words64: int = 4) -> list[int]:
    """``SeedSequence(entropy).generate_state(n_words64, uint64)``."""
    items = entropy if isinstance(entropy, list) else [entropy]
    data = [w for x in items for w in _words(int(x))]
    h = _Hash(_INIT_A, _MULT_A)
    pool = [h(data[i] if i < len(data) else 0) for i in range(_POOL)]
    for src in range(_POOL):
        for dst in range(_POOL):
            if src != dst:
                pool[dst] = _mix(pool[dst], h(pool[src]))
    for src in range(_POOL, len(data)):
        for dst in range(_POOL):
            pool[dst] = _mix(pool[dst], h(data[src]))
    g = _Hash(_INIT_B, _MULT_B)
    source = cycle(pool)
    w32 = [g(next(source)) for _ in range(2 * n_words64)]
    return [w32[2 * i] | (w32[2 * i + 1] << 32) for i in range(n_words64)]


class Generator:
    """``numpy.random.default_rng(entropy)`` for the draws the workload uses."""

    def __init__(self, entropy: list[int] | int):
        s = seed_state(entropy)
        init, seq = (s[0] << 64) | s[1], (s[2] << 64) | s[3]
        self._inc = ((seq << 1) | 1) & _M128
        self._state = (self._inc) & _M128  # state 0, one step
        self._state = (self._state + init) & _M128
        self._state = (self._state * _PCG_MULT + self._inc) & _M128
        self._half: int | None = None  # the upper 32 bits of the last 64-bit draw

    def next64(self) -> int:
        self._state = s = (self._state * _PCG_MULT + self._inc) & _M128
        x = ((s >> 64) ^ s) & _M64
        rot = s >> 122
        return ((x >> rot) | (x << (64 - rot))) & _M64

    def next32(self) -> int:
        if self._half is not None:
            out, self._half = self._half, None
            return out
        v = self.next64()
        self._half = v >> 32
        return v & _M32

    def _bounded(self, rng: int) -> int:
        """Uniform in [0, rng] (inclusive), as numpy's Lemire method draws it."""
        if rng == 0:
            return 0
        if rng < _M32:
            excl = rng + 1
            m = self.next32() * excl
            if (m & _M32) < excl:
                threshold = (_M32 - rng) % excl
                while (m & _M32) < threshold:
                    m = self.next32() * excl
            return m >> 32
        if rng == _M32:
            return self.next32()
        if rng < _M64:
            excl = rng + 1
            m = self.next64() * excl
            if (m & _M64) < excl:
                threshold = (_M64 - rng) % excl
                while (m & _M64) < threshold:
                    m = self.next64() * excl
            return m >> 64
        return self.next64()

    def integers(self, low: int, high: int, size: int) -> list[int]:
        """``integers(low, high, size=size, dtype=int64)``: uniform in [low, high)."""
        if high <= low:
            raise ValueError("high <= low")
        rng = high - 1 - low
        return [low + self._bounded(rng) for _ in range(size)]
