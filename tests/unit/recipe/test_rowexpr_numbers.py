"""A setting is a number only in plain ASCII decimals, and template arithmetic never raises
anything but a ValueError naming the expression (render turns it into a located error)."""

from __future__ import annotations

import pytest

from infersweep.config import numbers
from infersweep.recipe import rowexpr, settings


def _row(**values) -> dict:
    return {"prefill": {"additional-settings": [f"{k}={v}" for k, v in values.items()]},
            "decode": {}}


@pytest.mark.parametrize("text, want", [("12", 12), ("0", 0), ("1.79", 1.79),
                                        ("007", 7), ("999999999999999", 999999999999999)])
def test_plain_decimals_are_numbers(text, want):
    assert numbers.plain_number(text) == want


@pytest.mark.parametrize("text", ["inf", "-inf", "nan", "1e308", "1_000", "\u0663",
                                  "\u0661\u0662", "1" * 400, "1" * 16, " 5", "5 ", "+5",
                                  "-5", "0x10", "1.", ".5", "1.2.3", "\uff15", ""])
def test_anything_else_is_text(text):
    assert numbers.plain_number(text) is None
    assert rowexpr.value(_row(PREFILL_NODES=text), "setting.PREFILL_NODES") == text


@pytest.mark.parametrize("value", ["inf", "1e308", "1" * 400, "1_000", "\u0663"])
@pytest.mark.parametrize("expr", ["row.setting.PREFILL_NODES * 2", "row.setting.PREFILL_NODES / 3",
                                  "row.setting.PREFILL_NODES + 1",
                                  "8 / row.setting.PREFILL_NODES"])
def test_arithmetic_on_a_setting_that_is_not_a_number_is_a_value_error(value, expr):
    row = _row(PREFILL_NODES=value)
    with pytest.raises(ValueError, match="not a number") as err:
        rowexpr.evaluate(expr, lambda name: rowexpr.value(row, name))
    assert len(str(err.value)) < 200


@pytest.mark.parametrize("expr, fields", [
    ("row.a * row.a * row.a", {"a": 10 ** 15}),
    ("row.a * row.b", {"a": 10 ** 15, "b": 1.5}),
    ("row.a / row.b", {"a": 10 ** 400, "b": 3}),
    ("row.a / row.b", {"a": 1e300, "b": 1e-300}),
    ("row.a * 2", {"a": float("inf")}),
    ("row.a + 1", {"a": float("nan")}),
    ("row.a * 999999999999999999999999", {"a": 10 ** 300}),
])
def test_arithmetic_beyond_the_bound_is_a_value_error(expr, fields):
    with pytest.raises(ValueError, match="too large"):
        rowexpr.evaluate(expr, fields.get)


def test_division_of_whole_numbers_is_exact():
    big = 10 ** 15 - 1
    assert rowexpr.evaluate("row.a / 7", {"a": big}.get) == -(-big // 7)
    assert rowexpr.evaluate("row.a / row.b", {"a": 9, "b": 4}.get) == 3
    assert rowexpr.evaluate("row.setting.DECODE_MTP_SIZE + 1",
                            lambda n: rowexpr.value(_row(DECODE_MTP_SIZE="3"), n)) == 4


def test_digits_of_other_scripts_are_not_template_numbers():
    assert not rowexpr.is_expression("row.tp * \u0663")
    assert rowexpr.is_expression("row.tp * 3")


@pytest.mark.parametrize("value", ["1_000", "0.5", "\u0663", "inf", "1" * 400])
def test_whole_number_settings_refuse_anything_but_digits(value):
    found, problems = settings.number(_row(PREFILL_NODES=value), "PREFILL_NODES", "src")
    assert found is None and len(problems) == 1
    assert "is not a whole number" in problems[0].message
    assert len(problems[0].message) < 200
