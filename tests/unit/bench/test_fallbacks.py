"""The stdlib stand-ins for numpy and orjson give what numpy and orjson give."""

from __future__ import annotations

import json
import math
import random

import numpy as np
import orjson
import pytest

from infersweep.bench import dataset, purestats, runtime, seeded


@pytest.mark.parametrize("entropy", [[0, 1, 0], [5, 2, 3], [2**70 + 3, 1, 3], [0], 7, [2**32, 4]])
def test_seeded_generator_draws_numpys_integers(entropy):
    ours, theirs = seeded.Generator(entropy), np.random.default_rng(entropy)
    for lo, hi, n in ((1, 9, 50), (0, 32000, 40), (6554, 8193, 30), (0, 2**33, 5),
                      (0, 2**32, 5), (3, 4, 3), (5, 2**62 + 5, 3)):
        assert ours.integers(lo, hi, n) == theirs.integers(lo, hi, size=n,
                                                           dtype=np.int64).tolist()


def test_plan_without_numpy_is_the_same_workload(monkeypatch):
    want = dataset.make_plan(200, 8192, 1024, 0.8, seed=3)
    want_text, want_ids = dataset.pseudo_text(want, 5), dataset.token_ids(want, 7).tolist()
    monkeypatch.setattr(dataset, "np", None)
    got = dataset.make_plan(200, 8192, 1024, 0.8, seed=3)
    assert got.input_lens == want.input_lens.tolist()
    assert got.output_lens == want.output_lens.tolist()
    assert got.offsets == want.offsets.tolist()
    assert dataset.pseudo_text(got, 5) == want_text
    assert dataset.token_ids(got, 7) == want_ids


def _samples():
    rnd = random.Random(1)
    for n in (1, 2, 3, 7, 8, 9, 16, 17, 127, 128, 129, 257, 1023, 4097, 8193, 20000):
        for draw in (rnd.random, lambda: rnd.expovariate(0.01), lambda: float(rnd.randint(0, 5)),
                     lambda: rnd.gauss(0, 1) * 10 ** rnd.randint(-3, 6)):
            yield [draw() * 1000.0 for _ in range(n)]


@pytest.mark.parametrize("values", list(_samples()))
def test_pure_statistics_equal_numpys_bit_for_bit(values):
    arr, s = np.asarray(values, dtype=np.float64), sorted(values)
    assert purestats.mean(values) == float(np.mean(arr))
    assert purestats.std(values) == float(np.std(arr))
    assert purestats.median_sorted(s) == float(np.median(arr))
    for q in (0, 10, 25, 33.3, 50, 75, 90, 95, 99, 99.9, 100):
        assert purestats.percentile_sorted(s, q) == float(np.percentile(arr, q)), q


def test_stdlib_json_writes_what_orjson_writes(monkeypatch):
    payload = {"model": "m", "prompt": [1, 2, 3], "max_tokens": 4, "stream": True,
               "text": "naïve ✓", "t": 0.1, "n": None, "nested": {"a": [1.5, -2]}}
    import importlib

    monkeypatch.setitem(__import__("sys").modules, "orjson", None)
    stdlib = importlib.reload(runtime)
    try:
        assert stdlib.JSON == "stdlib"
        assert stdlib.dumps(payload) == orjson.dumps(payload)
        assert json.loads(stdlib.dumps_indented({"x": math.nan, "y": [math.inf]})) == {
            "x": None, "y": [None]}
        assert stdlib.loads(b'{"a": [1, 2.5]}') == {"a": [1, 2.5]}
        for bad in (b'{"a":', b"\xff\xfe", b"NaN", b'{"a": Infinity}'):
            with pytest.raises(stdlib.JSONDecodeError):
                stdlib.loads(bad)
    finally:
        monkeypatch.undo()
        importlib.reload(runtime)
