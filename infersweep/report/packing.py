"""Columns packed into short strings for the explorer's data file (explorer-core.js unpacks).

A browser parses one long string far faster than an array literal of as many numbers, and a
packed value takes 1-3 characters where a JSON number takes 5-8 with its comma. Digits are
base 90: the printable ASCII characters other than ``"``, ``\\``, ``<``, ``>`` and ``&``, so a
packed string needs no escape in JSON nor inside a ``<script>``.

- **ints** (codes, counts, indices; 0 or more): fixed width, the width as the first character
  (``"2"`` then two digits per value).
- **numbers** (metrics): ``DIGITS`` significant digits, three digits per value: 0 is no value,
  1 is zero, else ``2 + 2 * ((exponent - EMIN) * 9000 + mantissa - 1000) + negative`` for
  ``|v| = mantissa * 10**exponent`` with a four-digit mantissa. Unpacking divides (or
  multiplies) the mantissa by an exact power of ten, so Python and JavaScript read back the
  same double, the one nearest to the 4-digit decimal.
- a **sparse** number column, ``{"at": ints, "values": numbers}``, when most values are
  missing (power measured by few runs, the agentic cache rates).
"""

from __future__ import annotations

import numpy as np

ALPHABET = "".join(c for c in map(chr, range(0x20, 0x7F)) if c not in '"\\<>&')
BASE = len(ALPHABET)  # 90
DIGITS = 4
NUMBER_WIDTH = 3
EMIN, EMAX = -20, 19  # exponents of the 4-digit mantissa: |v| from 1e-17 to about 1e23
_MANTISSAS = 9000
_LOOKUP = np.frombuffer(ALPHABET.encode("ascii"), dtype=np.uint8)
_VALUE = {c: i for i, c in enumerate(ALPHABET)}
assert BASE == 90 and 2 + 2 * (EMAX - EMIN + 1) * _MANTISSAS <= BASE ** NUMBER_WIDTH


def _digits(codes: np.ndarray, width: int) -> str:
    """``codes`` (non-negative ints below BASE**width) as ``width`` digits each."""
    places = BASE ** np.arange(width - 1, -1, -1, dtype=np.int64)
    digits = (codes.astype(np.int64)[:, None] // places) % BASE
    return _LOOKUP[digits.ravel()].tobytes().decode("ascii")


def _codes(text: str, width: int) -> list[int]:
    out = []
    for i in range(0, len(text), width):
        n = 0
        for c in text[i:i + width]:
            n = n * BASE + _VALUE[c]
        out.append(n)
    return out


def pack_ints(values) -> str:
    """Non-negative ints, fixed width, the width first."""
    a = np.asarray(list(values), dtype=np.int64)
    if a.size and a.min() < 0:
        raise ValueError(f"cannot pack a negative int ({int(a.min())})")
    top = int(a.max()) if a.size else 0
    width = 1
    while BASE ** width <= top:
        width += 1
    return str(width) + _digits(a, width)


def unpack_ints(text: str) -> list[int]:
    return _codes(text[1:], int(text[0]))


def _number_codes(values) -> np.ndarray:
    a = np.array(values if isinstance(values, list) else list(values), dtype=np.float64)  # None: nan
    codes = np.zeros(a.size, dtype=np.int64)                 # 0: no value (None, nan, inf)
    mag = np.abs(a)
    ok = np.isfinite(a)
    tiny = ok & (mag < 10.0 ** (EMIN + DIGITS - 1))          # zero at these digits
    codes[tiny] = 1
    real = ok & ~tiny
    if not real.any():
        return codes
    m, neg = mag[real], a[real] < 0
    e = np.floor(np.log10(m)).astype(np.int64) - (DIGITS - 1)
    mant = np.rint(m / 10.0 ** e.astype(np.float64))
    up, low = mant >= 10 ** DIGITS, mant < 10 ** (DIGITS - 1)  # log10 a hair off
    e[up] += 1
    e[low] -= 1
    mant = np.where(up | low, np.rint(m / 10.0 ** e.astype(np.float64)), mant)
    if e.max() > EMAX:
        raise ValueError(f"cannot pack {float(m.max())!r}: beyond 1e{EMAX + DIGITS}")
    codes[real] = 2 + 2 * ((e - EMIN) * _MANTISSAS + mant.astype(np.int64)
                           - 10 ** (DIGITS - 1)) + neg
    return codes


def _number(code: int) -> float | None:
    if code < 2:
        return None if code == 0 else 0.0
    k, neg = divmod(code - 2, 2)
    e, mant = divmod(k, _MANTISSAS)
    e += EMIN
    mant += 10 ** (DIGITS - 1)
    v = mant / 10 ** -e if e < 0 else float(mant * 10 ** e)
    return -v if neg else v


def pack_numbers(values) -> str | dict:
    """Numbers (None or nan: no value) at ``DIGITS`` significant digits; sparse when most
    are missing."""
    codes = _number_codes(values)
    present = np.flatnonzero(codes)
    if 2 * present.size < codes.size:
        return {"at": pack_ints(present), "values": _digits(codes[present], NUMBER_WIDTH)}
    return _digits(codes, NUMBER_WIDTH)


def unpack_numbers(packed: str | dict, n: int) -> list[float | None]:
    """The ``n`` values of a packed number column."""
    if isinstance(packed, dict):
        out: list[float | None] = [None] * n
        for i, c in zip(unpack_ints(packed["at"]), _codes(packed["values"], NUMBER_WIDTH),
                        strict=True):
            out[i] = _number(c)
        return out
    return [_number(c) for c in _codes(packed, NUMBER_WIDTH)]
