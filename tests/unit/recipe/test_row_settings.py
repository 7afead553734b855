"""A template's row-settings: the rule language, the settings InferenceX's scripts compute in
shell, refusals in the rule's own words, and a row whose points would need two servers."""

from __future__ import annotations

import json

import pytest

from infersweep.diagnostics import InputError
from infersweep.recipe import refusal, rowrules
from infersweep.recipe.render import check_template, render_row
from infersweep.yamldoc import parse_yaml
from tests.conftest import REPO
from tests.unit.recipe.test_coverage import frozen  # noqa: F401 - the fixture

ATOM = {"image": "rocm/atom-dev:x", "model": "deepseek-ai/DeepSeek-V4-Pro",
        "model-prefix": "dsv4", "precision": "fp4", "framework": "atom", "runner": "mi355x",
        "isl": 8192, "osl": 1024, "tp": 8, "pp": 1, "dcp-size": 1, "pcp-size": 1, "ep": 1,
        "dp-attn": False, "spec-decoding": "none", "max-model-len": 9472,
        "exp-name": "dsv4_8k1k", "disagg": False, "run-eval": False, "conc": 4}


def _atom(recipe: dict) -> dict:
    return recipe["backend"]["atom_config"]["aggregated"]


@pytest.mark.parametrize("changes, tbo, max_seqs", [
    ({"conc": 32}, False, None),                       # dp off, low conc: ATOM's default
    ({"conc": 64}, False, 64),                         # dp off from 64 on: capped at conc
    ({"conc": 16, "dp-attn": True}, False, 16),        # every DPA point is capped
    ({"conc": 64, "dp-attn": True}, True, 64),         # DPA + TP: TBO from 64 on
    ({"conc": 64, "dp-attn": True, "ep": 8}, False, 64),  # DPA + EP: no TBO
])
def test_the_atom_template_carries_the_scripts_conditional_settings(changes, tbo, max_seqs):
    recipe = render_row({**ATOM, **changes}, REPO).recipe
    engine = _atom(recipe)
    assert engine.get("enable-tbo", False) is tbo
    assert engine.get("max-num-seqs") == max_seqs
    env = recipe["backend"]["aggregated_environment"]
    assert ("GPU_MAX_HW_QUEUES" in env) is tbo
    assert engine.get("enable-expert-parallel", False) is (changes.get("ep", 1) > 1)
    assert recipe["resources"]["gpus_per_agg"] == 8 and recipe["frontend"] == {"type": "atom"}


def test_the_mtp_template_turns_tbo_on_only_from_256():
    mtp = {**ATOM, "spec-decoding": "mtp", "dp-attn": True}
    assert "enable-tbo" not in _atom(render_row({**mtp, "conc": 128}, REPO).recipe)
    engine = _atom(render_row({**mtp, "conc": 256}, REPO).recipe)
    assert engine["enable-tbo"] is True and engine["method"] == "mtp"


def test_products_and_typed_placeholders():
    row = {**ATOM, "framework": "sglang", "dp-attn": True, "ep": 8, "conc": 128}
    engine = render_row(row, REPO).recipe["backend"]["sglang_config"]["aggregated"]
    assert engine["chunked-prefill-size"] == 8192 * 8  # {{ row.isl * row.tp }}
    assert engine["max-running-requests"] == 128 and engine["dp-size"] == 8
    assert engine["ep-size"] == 8 and engine["enable-dp-attention"] is True


@pytest.mark.parametrize("framework", ["sglang", "vllm", "trt", "atom"])
def test_each_framework_default_applies_the_rows_parallelism(framework):
    row = {**ATOM, "model-prefix": "qwen3", "framework": framework, "dp-attn": True, "ep": 8,
           "spec-decoding": "mtp"}
    recipe = render_row(row, REPO).recipe
    assert recipe["resources"]["agg_workers"] == 1 and recipe["resources"]["gpus_per_agg"] == 8
    text = json.dumps(recipe["backend"])
    engine = {"sglang": ("dp-size", "ep-size", "speculative-algorithm"),
              "vllm": ("data-parallel-size", "enable-expert-parallel", "speculative-config"),
              "trt": ("enable_attention_dp", "moe_expert_parallel_size", "speculative_config"),
              "atom": ("enable-dp-attention", "enable-expert-parallel", "num-speculative-tokens")}
    for flag in engine[framework]:
        assert f'"{flag}"' in text, flag
    assert "9472" in text  # the row's max-model-len


def test_a_default_refuses_what_it_cannot_express_in_its_own_words():
    row = {**ATOM, "model-prefix": "qwen3", "framework": "atom", "tp": 4, "pp": 2}
    with pytest.raises(refusal.RowRefused) as exc:
        render_row(row, REPO)
    assert exc.value.reason == refusal.ROW_SETTINGS
    assert "ATOM workers take tensor parallelism only" in str(exc.value)
    assert "[row-refused]" in str(exc.value) and "defaults/atom.yaml" in str(exc.value)


def test_pipeline_parallelism_takes_tp_times_pp_gpus():
    row = {**ATOM, "model-prefix": "qwen3", "framework": "vllm", "tp": 4, "pp": 2}
    recipe = render_row(row, REPO).recipe
    assert recipe["resources"]["gpus_per_agg"] == 8
    assert recipe["backend"]["vllm_config"]["aggregated"]["pipeline-parallel-size"] == 2


def test_points_of_one_row_that_need_two_servers_are_refused():
    with pytest.raises(InputError) as exc:
        render_row({**ATOM, "conc": [32, 64]}, REPO)  # max-num-seqs appears at 64
    assert "[row-conc-settings]" in str(exc.value)
    ok = render_row({**ATOM, "conc": [1, 2, 4]}, REPO)  # one server for all three
    assert [p.conc for p in ok.points] == [1, 2, 4]


@pytest.mark.parametrize("rules, expect", [
    ("- {when: {tpp: 1}, set: {a.b: 1}}", "'tpp' is not a field of a matrix row"),
    ("- {when: {prefill.conc: 4}, set: {a.b: 1}}", "'prefill.conc' is not a field"),
    ("- {when: {conc: {atleast: 4}}, set: {a.b: 1}}", "unknown comparison 'atleast'"),
    ("- {when: {}, set: {a.b: 1}, refuse: no}", "a rule has either 'set' or 'refuse'"),
    ("- {set: {a.b: 1}}", "a rule needs 'when'"),
    ("- {when: {}, set: {a.b: '{{ row.isl - row.tp }}'}}", "is not row.FIELD or arithmetic"),
    ("- {when: {conc: {min: high}}, set: {a.b: 1}}", "'min' takes a number"),
    ("{when: {}}", "row-settings must be a list of rules"),
])
def test_a_bad_rule_is_located(rules, expect):
    text = ("name: t\nmodel: {path: x, container: y, precision: fp4}\n"
            "resources: {gpu_type: g, gpus_per_node: 8, agg_nodes: 1, agg_workers: 1}\n"
            "frontend: {type: atom}\nbackend: {type: atom, atom_config: {aggregated: {a: 1}}}\n"
            f"row-settings:\n{rules if rules.startswith('-') else '  ' + rules}\n")
    problems = check_template(parse_yaml(text, "t.yaml"))
    assert any(expect in p.message and p.rule == "template-row-settings" and p.line >= 6
               for p in problems), problems


def test_conditions():
    ctx = rowrules.Context({"tp": 8, "dp-attn": True, "spec-decoding": "mtp"}, 64)
    assert rowrules.holds({"dp-attn": True, "conc": {"min": 64, "max": 64}}, ctx)
    assert not rowrules.holds({"conc": {"min": 65}}, ctx)
    assert rowrules.holds({"any": [{"tp": 4}, {"spec-decoding": {"in": ["mtp"]}}]}, ctx)
    assert not rowrules.holds({"spec-decoding": {"not": "mtp"}}, ctx)
    data = rowrules.apply({"a": {"b": 1, "c": 2}},
                          [{"when": {}, "set": {"a.c": None, "x.y": "{{ row.conc }}"}}], ctx)
    assert data == {"a": {"b": 1}, "x": {"y": 64}}  # null removes; a whole placeholder is typed
