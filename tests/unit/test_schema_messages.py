"""How JSON Schema errors become located messages: whole numbers only, fields allowed only
under a condition located at the field, and keys that are not text."""

from __future__ import annotations

import pytest
from jsonschema import Draft202012Validator

from infersweep.config.catalog import load_runners
from infersweep.config.schema import _leaf_errors, _to_diagnostic, validate_doc
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


def test_an_annotated_subschema_words_its_own_message():
    """``x-message`` replaces the per-branch messages of an anyOf; ``x-hint`` says what to do."""
    doc = parse_yaml("outer:\n  flag: [1]\n", "x.yaml")
    schema = {"properties": {"outer": {"properties": {"flag": {
        "anyOf": [{"type": "string"}, {"type": "integer"}],
        "x-message": "'{field}' in {where} must be text or a number, got {value}",
        "x-hint": "quote it"}}}}}
    (error,) = Draft202012Validator(schema).iter_errors(doc.data)
    (leaf,) = _leaf_errors(error)
    diag = _to_diagnostic(doc, leaf, (), doc.data)
    assert (diag.line, diag.col) == (2, 9)
    assert (diag.message, diag.hint) == ("'flag' in outer must be text or a number, got [1]",
                                         "quote it")


def test_every_unknown_key_is_reported_with_the_mapping_it_is_in():
    text = ENTRY.format(multinode="false", isl="8192", ss="tp: 8, conc-list: [4]")
    text = text.replace("  runner: mi355x\n", "  runer: mi355x\n  colour: blue\n")
    found = [(d.line, d.message, d.hint) for d in validate_doc(parse_yaml(text, "m.yaml"),
                                                               "master-config")]
    assert (7, "unknown key 'runer' in cfg", "did you mean 'runner'?") in found
    assert any(line == 8 and msg == "unknown key 'colour' in cfg" for line, msg, _ in found)
    assert not any("missing required key 'runner'" in msg for _, msg, _ in found)


def test_a_bad_runtime_name_gets_the_rule_of_runtime_names():
    doc = parse_yaml("runtimes:\n  srt-slurm: {repository: 'https://x/y', commit: abc}\n"
                     "  Engine: {repository: 'https://x/z', commit: abc}\n", "runtimes.yaml")
    messages = {(d.line, d.message, d.hint) for d in validate_doc(doc, "runtimes")}
    assert (3, 'key "Engine" is not a valid name in runtimes',
            "lowercase letters, digits and '-', starting with a letter") in messages
    assert not any("glob" in m for _, m, _ in messages)
    assert any(m == "'commit' is \"abc\", which does not match ^[0-9a-f]{40}$"
               and h.startswith("give the full 40-character") for _, m, h in messages)


def test_schema_annotations_use_only_the_known_placeholders():
    import json
    import re
    from importlib import resources

    seen = 0

    def walk(node, where):
        nonlocal seen
        if isinstance(node, dict):
            for key, value in node.items():
                if key.startswith("x-"):
                    assert key in ("x-message", "x-hint"), f"{where}: unknown annotation {key}"
                    names = set(re.findall(r"\{(\w+)\}", value))
                    assert names <= {"field", "value", "where"}, f"{where}/{key}: {names}"
                    seen += 1
                else:
                    walk(value, f"{where}/{key}")
        elif isinstance(node, list):
            for i, item in enumerate(node):
                walk(item, f"{where}/{i}")

    for item in resources.files("infersweep.schemas").iterdir():
        if item.name.endswith(".schema.json"):
            walk(json.loads(item.read_text()), item.name)
    assert seen >= 10


@pytest.mark.parametrize(("version", "message", "hint"), [
    ('"image:rocm/atom"', "a component version must not be an image reference",
     "give a release or commit SHA"),
    ('""', "'version' must not be empty", ""),
    ("1.2", "'version' must be a string, got 1.2", "quote the value"),
])
def test_an_annotation_words_only_the_failure_it_is_for(version, message, hint):
    """The image-reference wording is for the pattern; a wrong type or an empty value keeps
    the generic message."""
    text = ENTRY.format(multinode="false", isl="8192", ss="tp: 8, conc-list: [4]")
    text = text.replace("  runner: mi355x\n",
                        f"  runner: mi355x\n  router: {{name: atomesh, version: {version}}}\n")
    (diag,) = validate_doc(parse_yaml(text, "m.yaml"), "master-config")
    assert (diag.message, diag.hint) == (message, hint)
