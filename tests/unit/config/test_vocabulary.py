"""A framework or precision that is a near miss of a known one is a typo; a new one is not."""

from __future__ import annotations

import pytest

from infersweep.config.vocabulary import check_values, recipe_engines
from infersweep.yamldoc import parse_yaml


def _check(entries: dict[str, tuple[str, str]]):
    text = "".join(f"{k}:\n  framework: {fw}\n  precision: {pr}\n"
                   for k, (fw, pr) in entries.items())
    doc = parse_yaml(text, "m.yaml")
    return check_values(doc.data, {k: doc for k in doc.data})


def test_the_recipe_engines_come_from_the_recipe_schema():
    assert recipe_engines() == ("atom", "sglang", "vllm", "trt")


def test_a_misspelt_part_is_corrected_from_the_parts_others_use():
    errors, typos = _check({"dsv4-fp4-mi355x-atom": ("atom", "fp4"),
                            "dsv4-fp4-mi355x-atom-disagg": ("atom-disagg", "fp4"),
                            "dsv4-fp4-mi355x-sglang-disagg": ("sglang-dissag", "fp4")})
    (error,) = errors
    assert typos == {("dsv4-fp4-mi355x-sglang-disagg", "framework")}
    assert (error.line, error.col, error.rule) == (8, 14, "unknown-framework")
    assert "framework 'sglang-dissag' is unknown" in error.message
    assert "(known: atom, atom-disagg, sglang, trt, vllm)" in error.message
    assert error.hint == "did you mean 'sglang-disagg'?"


def test_a_misspelt_precision_is_corrected():
    errors, _ = _check({"a-fp8-mi355x-atom": ("atom", "fp8"), "b-fp8-mi355x-atom": ("atom", "fp88")})
    (error,) = errors
    assert error.rule == "unknown-precision" and error.hint == "did you mean 'fp8'?"


@pytest.mark.parametrize("entries", [
    # a new precision beside the known one is not a typo of it
    {"a-fp4-mi355x-atom": ("atom", "fp4"), "a-fp8-mi355x-atom": ("atom", "fp8")},
    # new frameworks unlike any known one
    {"a-fp4-mi355x-atom": ("atom", "fp4"), "a-fp4-mi355x-vllm": ("vllm", "fp4"),
     "a-fp4-b200-tilert": ("tilert", "fp4"), "a-fp4-gb200-llmd-vllm": ("llmd-vllm", "fp4")},
    # two values used once each: the correct one is not blamed for the other's typo
    {"a-fp4-mi355x-atom-disagg": ("atom-disagg", "fp4"), "b-fp4-mi355x-sglang": ("sglang", "fp4")},
    {"a-fp4-mi355x-atom": ("atom", "bf16"), "b-fp4-mi355x-atom": ("atom", "fp16")},
])
def test_real_and_new_values_pass(entries):
    assert _check(entries) == ([], set())
