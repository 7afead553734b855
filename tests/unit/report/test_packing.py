"""The explorer data file's packed columns: ints at a fixed width, numbers at 4 significant
digits in three base-90 digits (the same double as the 4-digit decimal), sparse columns, and
no character that would need escaping in JSON or inside a script."""

from __future__ import annotations

import json
import math
import random

import pytest

from infersweep.report import packing


def test_numbers_read_back_as_their_four_digit_decimal():
    rng = random.Random(7)
    values = [rng.lognormvariate(0, 8) * rng.choice((1, -1)) for _ in range(20_000)]
    values += [0.0, 1e-30, 999.95, 99.99999999999999, 1000.0, 1e22, 123456789.0, 0.1]
    back = packing.unpack_numbers(packing.pack_numbers(values), len(values))
    expect = [0.0 if abs(v) < 1e-17 else float(format(v, ".4g")) for v in values]
    assert back == expect


def test_missing_values_and_sparse_columns():
    dense = [1.5, None, math.nan, 2.0, 3.0, math.inf, 4.0]  # most present: dense
    packed = packing.pack_numbers(dense)
    assert isinstance(packed, str) and len(packed) == 3 * len(dense)
    assert packing.unpack_numbers(packed, 7) == [1.5, None, None, 2.0, 3.0, None, 4.0]
    sparse = [None] * 100 + [3.25] + [None] * 20
    packed = packing.pack_numbers(sparse)
    assert isinstance(packed, dict) and len(packed["values"]) == 3
    assert packing.unpack_numbers(packed, len(sparse)) == sparse
    assert packing.unpack_numbers(packing.pack_numbers([None] * 4), 4) == [None] * 4
    with pytest.raises(ValueError, match="beyond"):
        packing.pack_numbers([1e30])


def test_ints_take_the_width_they_need():
    assert packing.pack_ints([0, 1, 89]).startswith("1") and len(packing.pack_ints([0, 89])) == 3
    big = [0, 90, 8099, 8100, 729_000, 12]
    text = packing.pack_ints(big)
    assert text[0] == "4" and packing.unpack_ints(text) == big
    assert packing.unpack_ints(packing.pack_ints([])) == []
    with pytest.raises(ValueError, match="negative"):
        packing.pack_ints([3, -1])


def test_packed_text_needs_no_escape():
    assert len(packing.ALPHABET) == 90 and not set('"\\<>&') & set(packing.ALPHABET)
    text = packing.pack_numbers([random.Random(1).random() * 1e6 for _ in range(5000)])
    assert json.dumps(text) == f'"{text}"'
