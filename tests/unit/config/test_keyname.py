"""A config key's parts must not contradict its entry's fields."""

from __future__ import annotations

import pytest

from infersweep.config.keyname import check_key
from infersweep.yamldoc import parse_yaml

LABELS = {"mi355x": [], "mi355x-disagg": [], "cluster:mi355x-amds": [], "b300": []}
FRAMEWORKS = {"atom", "atom-disagg", "sglang", "sglang-disagg", "trt", "dynamo-trt"}


def _check(key, prefix="dsv4", precision="fp4", framework="atom", runner="mi355x", skip=(),
           hardware=None):
    ss = "tp: 8"
    if hardware:
        ss = f"prefill: {{hardware: {hardware[0]}}}, decode: {{hardware: {hardware[1]}}}"
    text = (f"{key}:\n  model-prefix: {prefix}\n  precision: {precision}\n"
            f"  framework: {framework}\n  runner: {runner}\n  scenarios:\n"
            f"    fixed-seq-len:\n    - search-space:\n      - {{{ss}}}\n")
    doc = parse_yaml(text, "m.yaml")
    return check_key(doc, key, doc.data[key], labels=LABELS, frameworks=FRAMEWORKS,
                     skip=set(skip))


@pytest.mark.parametrize(("key", "fields"), [
    ("dsv4-fp4-mi355x-atom", {}),
    ("dsv4-fp4-mi355x-atom-mtp", {}),
    ("dsv4-fp4-mi355x-atom-disagg", {"framework": "atom-disagg", "runner": "mi355x-disagg"}),
    ("dsv4-fp4-mi355x-sglang-agentic-mtp", {"framework": "sglang",
                                            "runner": "cluster:mi355x-amds"}),
    ("dsv4-fp4-b300-trtllm-agentic-mtp", {"framework": "trt", "runner": "b300"}),  # same engine
    ("dsv4-fp4-b300-dynamo-trt-agentic-disagg", {"framework": "dynamo-trt", "runner": "b300"}),
    ("dsv4-fp4-b200-sglang", {"framework": "sglang", "hardware": ("b200", "h100")}),
    ("cfg", {}),  # not in the convention at all: nothing to contradict
    ("my-config", {"precision": "fp8"}),
    ("dsv4-fp4-mi300x-atom", {"runner": "unknown-label"}),  # the runner error is the cause
])
def test_keys_that_agree_with_their_entry(key, fields):
    assert _check(key, **fields) == []


@pytest.mark.parametrize(("key", "fields", "names"), [
    ("dsr1-fp4-mi355x-atom", {}, "names model prefix 'dsr1', but its model-prefix (line 2) "
                                 "is 'dsv4'"),
    ("dsv4-fp8-mi355x-atom", {}, "names precision 'fp8', but its precision (line 3) is 'fp4'"),
    ("dsv4-fp4-mi300x-atom", {}, "names SKU 'mi300x', but its runner (line 5) is 'mi355x' "
                                 "(SKU 'mi355x')"),
    ("dsv4-fp4-mi355x-sglang", {}, "names framework 'sglang', but its framework (line 4) is "
                                   "'atom'"),
    ("dsv4-fp4-mi355x-atom-disagg", {}, "names framework 'atom-disagg', but its framework "
                                        "(line 4) is 'atom'"),
    ("deepseek-v4-fp4-mi355x-atom", {}, "names model prefix 'deepseek', but its model-prefix "
                                        "(line 2) is 'dsv4'"),
])
def test_keys_that_contradict_their_entry(key, fields, names):
    (diag,) = _check(key, **fields)
    assert (diag.line, diag.col, diag.rule) == (1, 1, "config-key")
    assert diag.message == f"config key '{key}' {names}"
    assert diag.hint.startswith("fix '")


def test_a_field_already_reported_is_not_blamed_again_through_the_key():
    assert _check("dsv4-fp8-mi355x-atom", precision="fp88", skip=["precision"]) == []
