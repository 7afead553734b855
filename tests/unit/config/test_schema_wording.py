"""One mistake, one message, in the user's words: the cause first, what follows from it
suppressed, and never jsonschema's own text or a JSON pointer."""

from __future__ import annotations

import copy
import re

import pytest
from jsonschema import Draft202012Validator

from infersweep.config.schema import _leaf_errors, _to_diagnostic, validate_doc
from infersweep.yamldoc import load_yaml, parse_yaml
from tests.conftest import FROZEN_MASTER, REPO

RAW = re.compile(r"False schema|is not valid under any of|is valid under each of|Additional "
                 r"propert|is a required property|is not of type|is too (short|long)|should be "
                 r"non-empty|is not one of|was expected|is less than the minimum|non-unique|"
                 r"should not be valid|does not have enough|^'\d+'|'\d+' (must|is)")

# real files and the schema that checks each
FILES = [("tests/data/catalog/amd-master.yaml", "master-config"), ("configs/runners.yaml", "runners"),
         ("configs/fleets.yaml", "fleets"), ("configs/eval-thresholds.yaml", "eval-thresholds"),
         ("tests/data/changelog-base/perf-changelog.yaml", "perf-changelog"), ("configs/runtimes.yaml", "runtimes")]


def _mutations(data, depth=0):
    """Wrong values at every place of the first entry of each mapping (a wrong type, an
    empty value, a negative number, an unknown key, a key removed)."""
    if depth > 6:
        return
    if isinstance(data, dict):
        items = list(data.items())
        for key, value in items[:6]:
            for wrong in ([1], "x", -1, {}, None, 1.5):
                yield {**data, key: wrong}
            yield {k: v for k, v in data.items() if k != key}
            for sub in _mutations(value, depth + 1):
                yield {**data, key: sub}
        yield {**data, "zz-unknown": 1}
    elif isinstance(data, list) and data:
        for sub in _mutations(data[0], depth + 1):
            yield [sub, *data[1:]]
        yield [*data, "x"]


@pytest.mark.parametrize(("path", "schema"), FILES, ids=[f for f, _ in FILES])
def test_no_message_speaks_jsonschema(path, schema):
    doc = load_yaml(REPO / path)
    seen = 0
    for data in [[], "x", 42, {}, {"zz": 1}, [{"a": 1}], *_mutations(copy.deepcopy(doc.data))]:
        for diag in validate_doc(doc, schema, data=data):
            seen += 1
            assert not RAW.search(diag.message), (diag, data)
            assert not RAW.search(diag.hint), (diag, data)
    assert seen > 20


def test_a_document_of_the_wrong_shape_is_named_in_words():
    doc = parse_yaml("- a: 1\n", "m.yaml")
    (diag,) = validate_doc(doc, "master-config")
    assert diag.message.startswith("the document must be a mapping, got [")


def test_a_top_level_list_item_is_named_by_its_position_not_a_pointer():
    doc = parse_yaml("- 5\n", "c.yaml")
    messages = [d.message for d in validate_doc(doc, "perf-changelog")]
    assert messages and all("'0'" not in m for m in messages)
    assert any(m.startswith("item 1 must be") for m in messages)


@pytest.mark.parametrize(("schema", "value", "message"), [
    ({"oneOf": [{"type": "integer"}, {"minimum": 0}]}, 3, "'v' matches more than one"),
    ({"anyOf": []}, 3, "'v' has none of the allowed forms"),
    ({"maxItems": 1}, [1, 2], "'v' has more than 1 items"),
    ({"multipleOf": 2}, 3, "'v' must be a multiple of 2"),
    ({"dependentRequired": {"a": ["b"]}}, {"a": 1}, "'v' is missing a key"),
])
def test_failures_without_their_own_wording_still_get_words(schema, value, message):
    doc = parse_yaml("v: 1\n", "x.yaml")
    wrapper = {"properties": {"v": schema}}
    (error,) = Draft202012Validator(wrapper).iter_errors({"v": value})
    (leaf,) = list(_leaf_errors(error)) or [error]
    diag = _to_diagnostic(doc, leaf, (), {"v": value})
    assert diag.message.startswith(message)
    assert not RAW.search(diag.message)


ENTRY = (FROZEN_MASTER).read_text()


def _disagg_entry(replace: tuple[str, str] | None = None) -> str:
    text = ENTRY[ENTRY.index("dsv4-fp4-mi355x-atom-disagg:"):]
    return text.replace(*replace) if replace else text


@pytest.mark.parametrize(("replace", "first"), [
    (("  multinode: true\n", "  multi-node: true\n"),
     "unknown key 'multi-node' in dsv4-fp4-mi355x-atom-disagg"),
    (("  multinode: true\n", ""), "missing required key 'multinode' in dsv4-fp4-mi355x-atom"),
])
def test_a_missing_condition_key_is_the_one_message(replace, first):
    """Without 'multinode' the single-node branch of the schema would blame 'disagg', the
    KV transfer, and every prefill/decode block: those follow from the missing key."""
    doc = parse_yaml(_disagg_entry(replace), "m.yaml")
    (diag,) = validate_doc(doc, "master-config")
    assert diag.message.startswith(first)


def test_independent_mistakes_in_the_same_entry_are_all_reported():
    text = _disagg_entry(("  multinode: true\n", "  multi-node: true\n"))
    text = text.replace("  image: rocm", "  image: ''\n  colour: rocm")
    messages = sorted(d.message for d in validate_doc(parse_yaml(text, "m.yaml"),
                                                      "master-config"))
    assert len(messages) == 3
    assert any("'multi-node'" in m for m in messages)
    assert any("'colour'" in m for m in messages)
    assert any("'image' must not be empty" in m for m in messages)


def test_contracts_without_a_file_are_worded_the_same_way():
    """A matrix row or a manifest has no file to point into; its messages still speak words."""
    from infersweep.config.schema import validate_data

    row = {"image": "i", "model": "m", "model-prefix": "p", "precision": "fp4",
           "framework": "atom", "runner": "r", "prefill": {"num-worker": -1}, "zz": 1}
    messages = validate_data(row, "matrix-row")
    assert "missing required key 'conc'" in messages
    assert "prefill: 'num-worker' must be at least 0, got -1" in messages
    assert any(m.startswith("unknown key 'zz'") for m in messages)
    assert not any(RAW.search(m) for m in messages)
