"""srtctl's override files and selectors: merging, variants, names, and what is refused."""

from __future__ import annotations

import pytest

from infersweep.recipe import overrides
from infersweep.recipe.overrides import OverrideError, merge, valid_selector, variants

BASE = {"name": "r", "resources": {"prefill_nodes": 1, "decode_nodes": 1},
        "backend": {"sglang_config": {"prefill": {"tp": 4, "ep": 4}, "decode": {"tp": 8}}},
        "tags": ["a", "b"]}


def test_mappings_merge_lists_replace_null_deletes():
    got = merge(BASE, {"backend": {"sglang_config": {"prefill": {"tp": 8, "ep": None}}},
                       "tags": ["c"], "resources": {"decode_nodes": 2}})
    assert got["backend"]["sglang_config"]["prefill"] == {"tp": 8}
    assert got["backend"]["sglang_config"]["decode"] == {"tp": 8}
    assert got["tags"] == ["c"]
    assert got["resources"] == {"prefill_nodes": 1, "decode_nodes": 2}
    assert BASE["backend"]["sglang_config"]["prefill"] == {"tp": 4, "ep": 4}  # untouched


def test_a_mapping_over_a_scalar_replaces_it_whole_nulls_included():
    # srtctl only deletes a null key where it merges into a mapping; a mapping that replaces
    # a scalar is copied as written
    got = merge({"a": 1}, {"a": {"x": None, "y": 2}})
    assert got == {"a": {"x": None, "y": 2}}


@pytest.mark.parametrize("selector,ok", [
    ("base", True), ("override_tp8", True), ("override_a.b-c", True),
    ("zip_override_lowlat", True), ("zip_override_low-lat[12]", True), ("*mtp*", True),
    ("override_?", True), ("foo", False), ("zip_override_a b", False), ("override_", False),
    ("zip_override_x[-1]", False), ("", False)])
def test_selector_forms_are_srtctls(selector, ok):
    assert valid_selector(selector) is ok


def test_split_at_the_last_colon():
    assert overrides.split("recipes/a.yaml") == ("recipes/a.yaml", None)
    assert overrides.split("recipes/a.yaml:zip_override_x[1]") == ("recipes/a.yaml",
                                                                  "zip_override_x[1]")


def _file(**sections) -> dict:
    return {"base": BASE, **sections}


def test_no_selector_is_every_variant_without_base_overrides_first_each_sorted():
    data = _file(override_b={"tags": ["b"]}, override_a={"tags": ["a"]},
                 zip_override_z={"resources": {"decode_nodes": [1, 2]}})
    got = variants(data)
    assert [v.suffix for v in got] == ["a", "b", "z_0", "z_1"]
    assert [v.data["name"] for v in got] == ["r_a", "r_b", "r_z_0", "r_z_1"]


def test_base_selector_is_the_base_alone():
    (v,) = variants(_file(override_a={"tags": []}), "base")
    assert v.data == BASE and v.suffix == "base" and v.sections == ("base",)


def test_an_override_keeps_its_own_name():
    (v,) = variants(_file(override_a={"name": "mine", "tags": []}), "override_a")
    assert v.data["name"] == "mine"
    assert v.sections == ("override_a", "base")


def test_zip_takes_element_i_and_broadcasts_one_element_lists():
    data = _file(zip_override_lat={
        "resources": {"decode_nodes": [1, 2, 4]},
        "backend": {"sglang_config": {"decode": {"tp": [8]}}},
        "tags": [["x"], ["y"], ["z"]]})
    got = variants(data, "zip_override_lat")
    assert [v.data["resources"]["decode_nodes"] for v in got] == [1, 2, 4]
    assert [v.data["backend"]["sglang_config"]["decode"]["tp"] for v in got] == [8, 8, 8]
    assert [v.data["tags"] for v in got] == [["x"], ["y"], ["z"]]  # list of lists: a list each
    assert [v.suffix for v in got] == ["lat_0", "lat_1", "lat_2"]
    (one,) = variants(data, "zip_override_lat[1]")
    assert one.data == got[1].data and one.data["name"] == "r_lat_1"


def test_zip_names_come_from_a_list_of_names_not_from_a_single_name():
    listed = variants(_file(zip_override_g={"name": ["p", "q"], "tags": [["1"], ["2"]]}))
    assert [v.data["name"] for v in listed] == ["p", "q"]
    single = variants(_file(zip_override_g={"name": "same", "tags": [["1"], ["2"]]}))
    assert [v.data["name"] for v in single] == ["r_g_0", "r_g_1"]


def test_glob_selects_matching_sections_of_both_kinds():
    data = _file(override_mtp_a={"tags": []}, override_stp={"tags": []},
                 zip_override_mtp_z={"tags": [["1"], ["2"]]})
    assert [v.suffix for v in variants(data, "*mtp*")] == ["mtp_a", "mtp_z_0", "mtp_z_1"]


@pytest.mark.parametrize("data,selector,rule,words,pointer", [
    (_file(override_a={}), "override_b", "recipe-selector", "no 'override_b'", ()),
    (_file(zip_override_z={"tags": [[1], [2]]}), "zip_override_z[2]", "recipe-selector",
     "has 2 variant(s), 0 to 1", ("zip_override_z",)),
    (_file(zip_override_z={"tags": [[1], [2]]}), "zip_override_y[0]", "recipe-selector",
     "no 'zip_override_y'", ()),
    (_file(override_a={}), "*nothing*", "recipe-selector", "no section matches", ()),
    (_file(zip_override_z={"a": [1, 2], "b": [1, 2, 3]}), None, "recipe-override",
     "lengths [2, 3]", ("zip_override_z",)),
    (_file(zip_override_z={"a": []}), None, "recipe-override", "empty list",
     ("zip_override_z",)),
    (_file(zip_override_z={"a": 1}), None, "recipe-override", "no list",
     ("zip_override_z",)),
    (_file(override_a=["x"]), None, "recipe-override", "must be a mapping", ("override_a",)),
    ({"base": ["not", "a", "recipe"]}, None, "recipe-override", "'base' must be a mapping",
     ("base",)),
])
def test_what_srtctl_refuses_is_refused_with_where(data, selector, rule, words, pointer):
    with pytest.raises(OverrideError) as exc:
        variants(data, selector)
    assert exc.value.rule == rule
    assert words in exc.value.message
    assert exc.value.pointer == pointer
