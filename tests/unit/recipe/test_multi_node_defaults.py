"""Disaggregated framework defaults: a multi-node row naming no recipe renders from the row
alone (workers, TP, EP, DP attention, MTP, KV transfer, whole nodes), the arithmetic its
placeholders use, and a default standing in for a named recipe only when asked to."""

from __future__ import annotations

import pytest

from infersweep.diagnostics import InputError
from infersweep.recipe import lookup, refusal, rowexpr, topology
from infersweep.recipe.render import render_row
from infersweep.yamldoc import parse_yaml
from tests.conftest import REPO


def _worker(workers: int, tp: int, *settings: str, ep: int = 1, dpa: bool = False) -> dict:
    return {"num-worker": workers, "tp": tp, "pp": 1, "dcp-size": 1, "pcp-size": 1, "ep": ep,
            "dp-attn": dpa, "additional-settings": list(settings)}


# as InferenceX's AMD catalog expands its sglang-disagg entries (no CONFIG_FILE)
SGLANG_DISAGG = {
    "image": "lmsysorg/sglang:v0.5.16-rocm720-mi35x", "model": "deepseek-ai/DeepSeek-R1-0528",
    "model-prefix": "dsr1", "precision": "fp8", "framework": "sglang-disagg",
    "runner": "mi355x-disagg", "isl": 8192, "osl": 1024, "spec-decoding": "mtp",
    "prefill": _worker(1, 8, "PREFILL_NODES=1"),
    "decode": _worker(2, 8, "DECODE_NODES=2", "DECODE_MTP_SIZE=2"),
    "conc": [8, 16], "max-model-len": 9472, "exp-name": "dsr1_8k1k", "disagg": True,
    "run-eval": False, "router": {"name": "sglang-router", "version": "0.3.2"},
    "kv-p2p-transfer": "mori"}

DYNAMO_TRT = {
    **SGLANG_DISAGG, "framework": "dynamo-trt", "runner": "gb200", "spec-decoding": "none",
    "prefill": _worker(2, 4, ep=4, dpa=True), "decode": _worker(1, 16, ep=16, dpa=True),
    "router": {"name": "dynamo-router", "version": "0.8.1.post1"}, "kv-p2p-transfer": "nixl"}
MISSING = "CONFIG_FILE=recipes/trtllm/gb200-fp4/8k1k/ctx2_gen1_dep16.yaml"


@pytest.mark.parametrize("expr, fields, want", [
    ("row.isl", {"isl": 8192}, 8192),
    ("row.prefill.num-worker * row.prefill.tp / 8", {"prefill.num-worker": 3,
                                                    "prefill.tp": 4}, 2),  # 12 GPUs: 2 nodes
    ("row.decode.tp / 4", {"decode.tp": 16}, 4),
    ("row.setting.DECODE_MTP_SIZE + 1", {"setting.DECODE_MTP_SIZE": 2}, 3),
    ("row.image", {"image": "x:1"}, "x:1"),
])
def test_expressions(expr, fields, want):
    assert rowexpr.is_expression(expr)
    assert rowexpr.evaluate(expr, fields.get) == want


@pytest.mark.parametrize("expr, message", [
    ("row.image * 2", "'row.image' is 'x', not a number"),
    ("row.tp / 0", "divides by zero"),
])
def test_bad_arithmetic_says_which_term(expr, message):
    with pytest.raises(ValueError, match=message):
        rowexpr.evaluate(expr, {"image": "x", "tp": 8}.get)


def test_derived_fields():
    assert rowexpr.value(SGLANG_DISAGG, "gpu") == "mi355x"
    assert rowexpr.value(SGLANG_DISAGG, "setting.DECODE_MTP_SIZE") == 2
    assert rowexpr.value(SGLANG_DISAGG, "setting.PREFILL_NODES") == 1
    assert rowexpr.value(SGLANG_DISAGG, "setting.NOPE") is None
    assert rowexpr.value(SGLANG_DISAGG, "decode.num-worker") == 2


def test_an_amd_sglang_disagg_row_renders_from_its_framework_default():
    rendered = render_row(SGLANG_DISAGG, REPO)
    assert rendered.source == lookup.DEFAULT and rendered.replaces is None
    assert rendered.config_file == "benchmarks/multi_node/srt-slurm/defaults/sglang-disagg.yaml"
    recipe = rendered.recipe
    assert recipe["resources"] == {
        "gpu_type": "mi355x", "gpus_per_node": 8, "prefill_nodes": 1, "decode_nodes": 2,
        "prefill_workers": 1, "decode_workers": 2, "gpus_per_prefill": 8, "gpus_per_decode": 8}
    assert recipe["frontend"]["type"] == "sglang"
    decode = recipe["backend"]["sglang_config"]["decode"]
    assert decode["disaggregation-transfer-backend"] == "mori"  # the row's transfer engine
    # DECODE_MTP_SIZE is acted on (not refused as unknown): two steps, three draft tokens
    assert (decode["speculative-num-steps"], decode["speculative-num-draft-tokens"]) == (2, 3)
    assert decode["context-length"] == 9472 and "enable-dp-attention" not in decode
    assert [p.conc for p in rendered.points] == [8, 16]
    assert "the config has no template or recipe of its own" in rendered.text()


def test_decode_mtp_size_zero_means_no_speculation():
    row = {**SGLANG_DISAGG, "decode": _worker(2, 8, "DECODE_NODES=2", "DECODE_MTP_SIZE=0")}
    decode = render_row(row, REPO).recipe["backend"]["sglang_config"]["decode"]
    assert "speculative-algorithm" not in decode


def test_a_setting_the_default_does_not_read_is_still_refused():
    row = {**SGLANG_DISAGG, "decode": _worker(2, 8, "SYNTHETIC_ACCEPTANCE=true")}
    with pytest.raises(refusal.RowRefused) as exc:
        render_row(row, REPO)
    assert exc.value.reason == refusal.UNKNOWN_SETTING
    assert "DECODE_MTP_SIZE" in str(exc.value)  # listed among the understood ones


def test_a_row_whose_nodes_setting_disagrees_with_its_workers_is_refused():
    row = {**SGLANG_DISAGG, "prefill": _worker(1, 8, "PREFILL_NODES=2")}
    with pytest.raises(InputError) as exc:
        render_row(row, REPO)
    assert "[row-fit]" in str(exc.value) and "puts prefill on 1 node(s)" in str(exc.value)


def test_a_named_recipe_that_exists_nowhere_is_refused_unless_a_default_may_stand_in():
    row = {**DYNAMO_TRT, "prefill": _worker(2, 4, MISSING, ep=4, dpa=True)}
    with pytest.raises(refusal.RowRefused) as exc:
        render_row(row, REPO)
    assert exc.value.reason == refusal.NOT_FOUND
    rendered = render_row(row, REPO, missing=lookup.FALLBACK)
    assert rendered.source == lookup.DEFAULT
    assert rendered.replaces == MISSING.split("=", 1)[1]
    assert f"in place of CONFIG_FILE={rendered.replaces}, which exists nowhere" in rendered.text()
    assert rendered.as_json()["replaces"] == rendered.replaces
    res = rendered.recipe["resources"]
    # GB200 nodes hold 4 GPUs: 2 x TP4 prefill on 2 nodes, one TP16 decode over 4
    assert (res["gpus_per_node"], res["prefill_nodes"], res["decode_nodes"]) == (4, 2, 4)
    decode = rendered.recipe["backend"]["trtllm_config"]["decode"]
    assert (decode["tensor_parallel_size"], decode["moe_expert_parallel_size"],
            decode["enable_attention_dp"]) == (16, 16, True)


def test_a_framework_without_a_default_is_refused_naming_those_that_have_one():
    row = {**DYNAMO_TRT, "framework": "tilert"}
    with pytest.raises(refusal.RowRefused) as exc:
        render_row(row, REPO)
    assert exc.value.reason == refusal.NO_CONFIG_FILE
    assert "multi-node defaults exist for atom-disagg, dynamo-sglang, dynamo-trt, " \
           "dynamo-vllm, sglang-disagg" in str(exc.value)


@pytest.mark.parametrize("template", ["disagg-1p1d-tp8-8k1k", "disagg-2p1d-dpa-tp8-8k1k"])
def test_the_atom_default_runs_the_topology_of_the_tuned_templates(template):
    """InferenceX's AMD catalog has the seed config's two rows without a CONFIG_FILE: the ATOM
    default gives them the tuned templates' workers, nodes, DP attention and transfer, and
    ATOM's defaults for the engine settings the templates tune."""
    tuned_value = f"CONFIG_FILE=recipes/atom/deepseek-v4/mi355x/{template}.yaml"
    dpa = "dpa" in template
    row = {**SGLANG_DISAGG, "framework": "atom-disagg", "runner": "mi355x", "model-prefix": "dsv4",
           "spec-decoding": "none", "kv-p2p-transfer": "mooncake",
           "router": {"name": "atomesh", "version": "087b82d9c1f630e79149ba37e6213257ec9a76f8"},
           "prefill": _worker(2 if dpa else 1, 8, f"PREFILL_NODES={2 if dpa else 1}", dpa=dpa),
           "decode": _worker(1, 8, "DECODE_NODES=1", dpa=dpa)}
    default = render_row(row, REPO).recipe
    tuned = render_row({**row, "prefill": {**row["prefill"], "additional-settings": [
        *row["prefill"]["additional-settings"], tuned_value]}}, REPO).recipe
    assert default["resources"] == {**tuned["resources"], "gpu_type": "mi355x"}
    assert default["frontend"]["type"] == tuned["frontend"]["type"] == "atomesh"
    for key in ("type", "connector", "mooncake_protocol"):
        assert default["backend"][key] == tuned["backend"][key]
    for role in ("prefill", "decode"):
        engine = default["backend"]["atom_config"][role]
        assert engine.get("enable-dp-attention", False) is dpa
        assert engine["max-model-len"] == tuned["backend"]["atom_config"][role]["max-model-len"]
    assert default["identity"]["frameworks"]["atomesh"] == row["router"]["version"]


def test_the_atom_default_refuses_what_atom_cannot_run():
    row = {**SGLANG_DISAGG, "framework": "atom-disagg", "router": {"name": "atomesh",
           "version": "087b82d9c1f630e79149ba37e6213257ec9a76f8"},
           "kv-p2p-transfer": "mooncake", "decode": _worker(2, 8, "DECODE_NODES=2")}
    with pytest.raises(refusal.RowRefused) as exc:
        render_row(row, REPO)  # the row asks for MTP
    assert "runs no speculative decoding" in str(exc.value)


@pytest.mark.parametrize("backend, gpus, nodes, message", [
    ("sglang", 16, 2, None),                       # a worker over two whole nodes
    ("sglang", 16, 1, "need 2 nodes of 8 GPUs, not 1"),
    ("sglang", 12, 2, "a multiple of gpus_per_node"),
    ("atom", 16, 2, "ATOM runs each worker on one node"),
])
def test_workers_larger_than_a_node(backend, gpus, nodes, message):
    text = (f"resources: {{gpu_type: g, gpus_per_node: 8, prefill_nodes: {nodes}, "
            f"decode_nodes: 1, prefill_workers: 1, decode_workers: 1, "
            f"gpus_per_prefill: {gpus}, gpus_per_decode: 8}}\n"
            f"backend: {{type: {backend}, {backend}_config: {{prefill: {{a: 1}}, "
            "decode: {a: 1}}}\n")
    doc = parse_yaml(text, "t.yaml")
    found = [d.message + " " + d.hint for d in topology.check(doc, doc.data)]
    assert (found == []) if message is None else any(message in f for f in found), found
