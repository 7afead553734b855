"""Setting values `validate` refuses: numbers Python would read that are not plain ASCII
decimals within bounds, and anything but digits for a setting that counts things."""

from __future__ import annotations

import pytest

from infersweep.config.settingvalues import problem


@pytest.mark.parametrize("name, value", [
    ("PREFILL_NODES", "2"), ("DECODE_MTP_SIZE", "0"), ("SYNTHETIC_ACCEPTANCE_LENGTH", "1.79"),
    ("CONFIG_FILE", "recipes/x/ctx1dep4_gen5tep4_batch4.yaml"), ("SLURM_PARTITION", "batch_3"),
    ("PREFILL_IMAGE", "lmsysorg/sglang-rocm:v0.5.15"), ("MODE", "information"),
    ("X", "inference"), ("X", ""), ("X", "999999999999999"),
])
def test_fit_values(name, value):
    assert problem(name, value) is None


@pytest.mark.parametrize("name, value, said", [
    ("PREFILL_NODES", "inf", "not a whole number"),
    ("PREFILL_NODES", "0.5", "not a whole number"),
    ("PREFILL_NODES", "1_000", "not a whole number"),
    ("PREFILL_NODES", "\u0663", "not a whole number"),
    ("DECODE_NODES", "9" * 400, "more than 15 digits"),
    ("GPUS_PER_NODE", "-4", "not a whole number"),
    ("GPUS_PER_NODE", "abc", "not a whole number"),
    ("SYNTHETIC_ACCEPTANCE_LENGTH", "1e308", "not a plain decimal"),
    ("X", "inf", "not a plain decimal"), ("X", "NaN", "not a plain decimal"),
    ("X", "-Infinity", "not a plain decimal"), ("X", "1_000", "not a plain decimal"),
    ("X", "\u0661\u0662", "not a plain decimal"), ("X", " 5", "not a plain decimal"),
    ("X", "+5", "not a plain decimal"), ("X", "0x10", None),
    ("X", "1" * 400, "more than 15 digits"), ("X", "1." + "5" * 20, "more than 15 digits"),
])
def test_unfit_values(name, value, said):
    found = problem(name, value)
    if said is None:
        assert found is None  # text to Python too: a value, not a number
        return
    assert found is not None and said in found[0], found
    assert len(found[0]) < 120 and found[1]
