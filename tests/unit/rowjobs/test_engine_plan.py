"""The local executor's plan for every backend srt-slurm recipes use: each engine's own
spelling of its limits becomes the simulator's flags, DP ranks become `--dp-size`, and the
recipe's front end decides whether a router runs."""

from __future__ import annotations

import copy

import pytest

from infersweep.config.catalog import load_catalog
from infersweep.diagnostics import InputError
from infersweep.matrix.generate import Selection, generate_keyed
from infersweep.recipe.render import render_row
from infersweep.rowjobs.engineplan import ENGINE_SPEED, engine_plan
from tests.conftest import FROZEN_MASTER, FROZEN_RUNNERS, REPO
from tests.unit.recipe.conftest import KEY

ONE_NODE = {"gpu_type": "mi355x", "gpus_per_node": 8, "agg_nodes": 1, "agg_workers": 1,
            "gpus_per_agg": 8}


def agg(backend: str, config: dict, *, frontend: str = "dynamo", resources=None,
        **frontend_args) -> dict:
    front = {"type": frontend, "enable_multiple_frontends": False}
    if frontend_args:
        front["args"] = frontend_args
    return {"name": f"{backend}-agg", "resources": dict(resources or ONE_NODE), "frontend": front,
            "backend": {"type": backend, f"{backend}_config": {"aggregated": config},
                        "aggregated_environment": {"A": "1"}}}


def flags(args: list[str]) -> dict[str, str]:
    """The plan's flags without the fixed ones (role, model, timing model)."""
    assert args[0] == "--role" and args[2:4] == ["--served-model-name", "m"]
    assert tuple(args[-len(ENGINE_SPEED):]) == ENGINE_SPEED
    rest = args[4:-len(ENGINE_SPEED)]
    return dict(zip(rest[::2], rest[1::2], strict=True))


def test_atom_dp_attention_is_one_rank_per_gpu_of_the_worker_and_no_router():
    recipe = agg("atom", {"max-num-seqs": 64, "max-model-len": 9472,
                          "enable-dp-attention": True, "max-num-batched-tokens": 16384},
                 frontend="atom")
    (worker,), router = engine_plan(recipe, "m")
    assert router is None
    assert flags(worker["args"]) == {"--max-num-seqs": "64", "--max-model-len": "9472",
                                     "--max-num-batched-tokens": "16384", "--dp-size": "8"}


def test_atom_ranks_follow_the_gpus_srtctl_gives_a_worker():
    resources = {"gpus_per_node": 8, "agg_nodes": 1, "agg_workers": 2}  # 4 GPUs each
    recipe = agg("atom", {"enable_dp_attention": True}, frontend="atomesh",
                 resources=resources)
    workers, router = engine_plan(recipe, "m")
    assert [flags(w["args"]) for w in workers] == [{"--dp-size": "4"}] * 2
    assert router == {"args": ["--policy", "round-robin"]}
    no_dpa = agg("atom", {"max-num-seqs": 64}, frontend="atom")
    (worker,), _ = engine_plan(no_dpa, "m")
    assert "--dp-size" not in worker["args"]


def test_sglang_dp_attention_splits_its_totals_over_the_ranks():
    recipe = agg("sglang", {"tensor-parallel-size": 8, "dp-size": 8, "enable-dp-attention": True,
                            "ep-size": 8, "max-running-requests": 512, "context-length": 9472,
                            "chunked-prefill-size": 16384, "speculative-algorithm": "EAGLE"},
                 frontend="sglang")
    (worker,), router = engine_plan(recipe, "m")
    assert router is None  # a router over one worker is not needed
    assert flags(worker["args"]) == {"--max-num-seqs": "64", "--max-model-len": "9472",
                                     "--max-num-batched-tokens": "2048", "--dp-size": "8"}


def test_sglang_dp_without_dp_attention_is_full_replicas():
    recipe = agg("sglang", {"tp": 4, "dp-size": 2, "max_running_requests": 128,
                            "chunked_prefill_size": -1}, frontend="sglang")
    (worker,), _ = engine_plan(recipe, "m")
    # each replica has its own scheduler with the whole limit; -1 (no chunking): sim default
    assert flags(worker["args"]) == {"--max-num-seqs": "128", "--dp-size": "2"}


def test_sglang_dp_attention_needs_a_request_per_rank():
    recipe = agg("sglang", {"dp-size": 8, "enable-dp-attention": True,
                            "max-running-requests": 4})
    with pytest.raises(InputError, match=r"less than one per DP rank \(8 ranks") as err:
        engine_plan(recipe, "m")
    assert "raise it to at least 8" in str(err.value)


def test_vllm_data_parallel_ranks_keep_their_own_limits():
    recipe = agg("vllm", {"tensor-parallel-size": 8, "data-parallel-size": 8,
                          "enable-expert-parallel": True, "max-num-seqs": 256,
                          "max-model-len": 9472, "max-num-batched-tokens": 8192},
                 frontend="vllm")
    (worker,), router = engine_plan(recipe, "m")
    assert router is None
    assert flags(worker["args"]) == {"--max-num-seqs": "256", "--max-model-len": "9472",
                                     "--max-num-batched-tokens": "8192", "--dp-size": "8"}


def test_trtllm_attention_dp_is_one_rank_per_tp_rank():
    recipe = agg("trtllm", {"tensor_parallel_size": 8, "enable_attention_dp": True,
                            "moe_expert_parallel_size": 8, "max_batch_size": 256,
                            "max_seq_len": 9472, "max_num_tokens": 8192})
    (worker,), router = engine_plan(recipe, "m")
    assert router is None
    assert flags(worker["args"]) == {"--max-num-seqs": "256", "--max-model-len": "9472",
                                     "--max-num-batched-tokens": "8192", "--dp-size": "8"}
    # the upstream gpt-oss-120b agg-tp1 recipe: one GPU, no attention DP, kebab keys work too
    tp1 = agg("trtllm", {"backend": "pytorch", "tensor_parallel_size": 1,
                         "max-batch-size": 512, "max_num_tokens": 20000, "max_seq_len": 2248},
              resources={"gpus_per_node": 1, "agg_nodes": 1, "agg_workers": 1,
                         "gpus_per_agg": 1})
    (worker,), _ = engine_plan(tp1, "m")
    assert flags(worker["args"]) == {"--max-num-seqs": "512", "--max-model-len": "2248",
                                     "--max-num-batched-tokens": "20000"}


def test_several_agg_workers_run_behind_the_router_with_the_recipes_policy():
    two_nodes = {"gpu_type": "h100", "gpus_per_node": 8, "agg_nodes": 2, "agg_workers": 8}
    # like upstream's qwen3-32b agg-kv-sglang: 8 TP2 workers behind the SGLang router
    sglang = agg("sglang", {"tensor-parallel-size": 2, "context-length": 131072},
                 frontend="sglang", resources=two_nodes, policy="cache_aware")
    workers, router = engine_plan(sglang, "m")
    assert [w["role"] for w in workers] == ["aggregated"] * 8
    assert flags(workers[0]["args"]) == {"--max-model-len": "131072"}
    assert router == {"args": ["--policy", "least-loaded"]}
    sglang["frontend"].pop("args")  # the SGLang router's own default is cache_aware
    assert engine_plan(sglang, "m")[1] == {"args": ["--policy", "least-loaded"]}
    # like upstream's vllm agg-round-robin: 8 workers behind Dynamo's frontend
    vllm = agg("vllm", {"tensor-parallel-size": 2, "max-model-len": 131072},
               resources={**two_nodes, "gpus_per_agg": 2}, **{"router-reset-states": True})
    workers, router = engine_plan(vllm, "m")
    assert len(workers) == 8 and router == {"args": ["--policy", "round-robin"]}
    vllm["frontend"]["args"] = {"router-mode": "kv"}
    assert engine_plan(vllm, "m")[1] == {"args": ["--policy", "least-loaded"]}


def test_a_worker_front_end_serves_exactly_one_agg_worker():
    recipe = agg("vllm", {"max-num-seqs": 8}, frontend="vllm",
                 resources={"gpus_per_node": 8, "agg_nodes": 1, "agg_workers": 2})
    with pytest.raises(InputError, match="frontend type 'vllm' is the worker itself") as err:
        engine_plan(recipe, "m")
    assert "use a router front end" in str(err.value)


def test_a_backend_the_simulator_does_not_stand_in_for_is_refused():
    recipe = agg("sglang", {})
    recipe["backend"]["type"] = "mocker"
    with pytest.raises(InputError) as err:
        engine_plan(recipe, "m")
    text = str(err.value)
    assert text.startswith("recipe sglang-agg: the local executor cannot run backend type "
                           "'mocker'")
    assert "atom, sglang, vllm, trtllm" in text and "srt-slurm" in text


def test_a_role_without_its_engine_section_is_refused():
    recipe = agg("vllm", {"max-num-seqs": 8})
    recipe["backend"]["vllm_config"] = {"prefill": {}}
    with pytest.raises(InputError, match=r"no 'backend\.vllm_config\.aggregated' for the agg "
                                         r"workers"):
        engine_plan(recipe, "m")
    recipe["backend"].pop("vllm_config")
    with pytest.raises(InputError, match="give every role its engine settings"):
        engine_plan(recipe, "m")


def test_a_limit_that_is_not_a_number_is_refused():
    recipe = agg("sglang", {"max-running-requests": "lots"})
    with pytest.raises(InputError, match="'backend.sglang_config.aggregated.max-running-"
                                         "requests' is 'lots', not a whole number"):
        engine_plan(recipe, "m")
    recipe["backend"]["sglang_config"]["aggregated"]["max-running-requests"] = "96"
    (worker,), _ = engine_plan(recipe, "m")
    assert flags(worker["args"]) == {"--max-num-seqs": "96"}


def test_disaggregated_sglang_roles_get_their_own_ranks():
    recipe = {"name": "pd", "resources": {"gpus_per_node": 8, "prefill_nodes": 1,
                                          "prefill_workers": 1, "decode_nodes": 1,
                                          "decode_workers": 1},
              "frontend": {"type": "sglang", "args": {"policy": "round_robin"}},
              "backend": {"type": "sglang", "sglang_config": {
                  "prefill": {"max-running-requests": 256},
                  "decode": {"dp-size": 8, "enable-dp-attention": True,
                             "max-running-requests": 1024}}}}
    (pre, dec), router = engine_plan(recipe, "m")
    assert flags(pre["args"]) == {"--max-num-seqs": "256"}
    assert flags(dec["args"]) == {"--max-num-seqs": "128", "--dp-size": "8"}
    assert router == {"args": ["--policy", "round-robin", "--kv-base-ms", "1"]}
    recipe["frontend"]["type"] = "vllm"
    with pytest.raises(InputError, match="the recipe has 2 prefill/decode workers"):
        engine_plan(recipe, "m")


def test_the_seed_disaggregated_atom_plans_are_unchanged():
    """The seed config's P/D plans, flag for flag (its 2P1D recipe's enable-dp-attention
    included: ATOM's prefill and decode workers keep one scheduler each)."""
    catalog = load_catalog([FROZEN_MASTER], FROZEN_RUNNERS, strict_runners=False)
    rows = [r for _, r in generate_keyed(catalog, Selection(config_keys=[KEY], evals="none"))]
    plans = [engine_plan(render_row(r, REPO).recipe, "m") for r in rows]

    def worker(role, seqs):
        return {"role": role, "args": ["--role", role, "--served-model-name", "m",
                                       "--max-num-seqs", seqs, "--max-model-len", "9472",
                                       *ENGINE_SPEED]}

    router = {"args": ["--policy", "round-robin", "--kv-base-ms", "1"]}
    assert plans == [
        ([worker("prefill", "256"), worker("decode", "128")], router),
        ([worker("prefill", "256"), worker("prefill", "256"), worker("decode", "2048")], router),
    ]
    dpa = render_row(rows[1], REPO).recipe
    assert dpa["backend"]["atom_config"]["decode"]["enable-dp-attention"] is True


def test_plans_do_not_share_argument_lists():
    recipe = agg("vllm", {"max-num-seqs": 8},
                 resources={"gpus_per_node": 8, "agg_nodes": 1, "agg_workers": 2})
    workers, _ = engine_plan(copy.deepcopy(recipe), "m")
    workers[0]["args"].append("--fail-rate")  # the executor appends per-worker flags
    assert "--fail-rate" not in workers[1]["args"]
