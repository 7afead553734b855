"""Locating a pointer in raw JSON text (the positions orjson does not keep)."""

from __future__ import annotations

import json

import pytest

from infersweep.agentic.tracejson import line_col, locate

TEXT = """{
  "id": "a {tricky} \\"key\\": [1, 2]",
  "requests": [
    {"t": 0, "hash_ids": [1, 2, 3]},
    {"t": 1.5e0, "x": {"y": [true, null, "]"]}, "hash_ids": [4, 5]}
  ]
}"""


def test_the_text_is_json():
    assert json.loads(TEXT)["requests"][1]["hash_ids"] == [4, 5]


@pytest.mark.parametrize("pointer, key, expected", [
    ((), False, "{"),
    (("id",), False, '"a {tricky}'),
    (("id",), True, '"id"'),
    (("requests", 1, "hash_ids"), False, "[4, 5]"),
    (("requests", 1, "hash_ids"), True, '"hash_ids": [4, 5]'),
    (("requests", 1, "hash_ids", 1), False, "5]"),
    (("requests", 0, "hash_ids", 2), False, "3]"),
    (("requests", 1, "x", "y", 2), False, '"]"'),
])
def test_locate_finds_the_value_or_key(pointer, key, expected):
    assert TEXT[locate(TEXT, pointer, key=key):].startswith(expected)


def test_line_and_column_are_one_based():
    off = locate(TEXT, ("requests", 1, "hash_ids"), key=True)
    line, col = line_col(TEXT, off)
    assert line == 5
    assert TEXT.splitlines()[4][col - 1:].startswith('"hash_ids"')


def test_a_pointer_the_text_lacks_stops_at_the_deepest_match():
    off = locate(TEXT, ("requests", 7, "t"))
    assert TEXT[off:].startswith("[")  # the requests list, where it got to


def test_equal_keys_resolve_to_the_last_as_the_parser_does():
    text = '{"a": 1, "a": 2}'
    assert text[locate(text, ("a",)):].startswith("2")


def test_start_offsets_a_document_inside_a_longer_text():
    text = '{"x": 1}\n{"x": 22}'
    assert text[locate(text, ("x",), start=9):].startswith("22")
