"""How JSON Schema errors become located messages: whole numbers only, fields allowed only
under a condition located at the field, and keys that are not text."""

from __future__ import annotations

import pytest
from jsonschema import Draft202012Validator

from infersweep.config.catalog import load_runners
from infersweep.config.schema import _to_diagnostic, validate_doc
from infersweep.diagnostics import InputError
from infersweep.yamldoc import parse_yaml

ENTRY = """\
cfg:
  image: img
  model: m
  model-prefix: dsv4
  precision: fp4
  framework: atom
  runner: mi355x
  multinode: {multinode}
  scenarios:
    fixed-seq-len:
    - isl: {isl}
      osl: 1024
      search-space:
      - {{ {ss} }}
"""


def _diags(multinode="false", isl="8192", ss="tp: 8, conc-list: [4]"):
    doc = parse_yaml(ENTRY.format(multinode=multinode, isl=isl, ss=ss), "m.yaml")
    return validate_doc(doc, "master-config")


@pytest.mark.parametrize(("isl", "ss", "field", "hint"), [
    ("1024.0", "tp: 8, conc-list: [4]", "'isl'", "write 1024"),
    ("8192", "tp: 8.0, conc-list: [4]", "'tp'", "write 8"),
    ("8192", "tp: 8, conc-start: 4, conc-end: 64.0", "'conc-end'", "write 64"),
    ("8192", "tp: 8, conc-list: [4, 8.0]", "'conc-list[1]'", "write 8"),
    ("8192", "tp: 8, ep: 1.0, conc-list: [4]", "'ep'", "write 1"),
])
def test_whole_numbers_written_as_floats_are_refused(isl, ss, field, hint):
    (diag,) = _diags(isl=isl, ss=ss)
    assert f"{field} must be an integer" in diag.message
    assert hint in diag.hint


def test_fractional_and_boolean_values_are_not_told_to_drop_the_point():
    (frac,) = _diags(ss="tp: 8.5, conc-list: [4]")
    assert "must be an integer, got 8.5" in frac.message and "write" not in frac.hint
    (flag,) = _diags(ss="tp: true, conc-list: [4]")
    assert "must be an integer, got true" in flag.message


def test_conditional_field_is_located_at_the_field_with_its_condition():
    text = ENTRY.format(multinode="false", isl="8192", ss="tp: 8, conc-list: [4]")
    text = text.replace("  runner: mi355x\n", "  runner: mi355x\n  kv-p2p-transfer: nixl\n")
    (diag,) = validate_doc(parse_yaml(text, "m.yaml"), "master-config")
    assert (diag.line, diag.col) == (8, 3)
    assert diag.message.startswith("'kv-p2p-transfer' needs 'disagg: true'")
    assert "False schema" not in diag.message


def test_a_false_subschema_is_located_at_its_field():
    """jsonschema reports a `false` subschema at the parent object; it is moved to the key."""
    doc = parse_yaml("outer:\n  a: 1\n  b: two\n", "x.yaml")
    schema = {"properties": {"outer": {"properties": {"b": False}}}}
    (error,) = Draft202012Validator(schema).iter_errors(doc.data)
    diag = _to_diagnostic(doc, error, (), doc.data)
    assert (diag.line, diag.col) == (3, 3)
    assert diag.message == "'b' is not allowed here"


def test_non_string_keys_in_the_runners_file_are_located():
    doc = parse_yaml("labels:\n  mi355x: [a]\n  on: [b]\n  7: [c]\n", "runners.yaml")
    with pytest.raises(InputError) as exc:
        load_runners(doc)
    found = {(d.line, d.rule) for d in exc.value.diagnostics}
    assert found == {(3, "key-type"), (4, "key-type")}


def test_a_date_key_inside_a_value_does_not_break_the_message():
    """JSON cannot hold a date key, so the value is described without it failing."""
    wrong_type, key = _diags(ss="tp: {2024-01-01: 1}, conc-list: [4]")
    assert (wrong_type.line, wrong_type.col) == (14, 15)
    assert "'tp' must be an integer, got {datetime.date(2024, 1, 1): 1}" in wrong_type.message
    assert (key.line, key.col, key.rule) == (14, 16, "key-type")
