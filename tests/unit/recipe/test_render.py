"""Rendering the DeepSeek-V4 MI355X rows: every engine setting of the workload spec reaches
the recipe, the workload comes from the row, and the result passes the recipe schema."""

from __future__ import annotations

import re

import pytest
import yaml

from infersweep.diagnostics import InputError
from infersweep.recipe import command, schema, workload
from infersweep.recipe.render import render_row
from infersweep.yamldoc import parse_yaml
from tests.conftest import REPO

CUDAGRAPH = ("[1,2,4,8,16,24,32,40,48,56,64,72,80,88,96,104,112,120,128,136,144,152,160,168,"
             "176,184,192,200,208,216,224,232,240,248,256]")


@pytest.fixture(scope="module")
def rendered(dsv4_rows):
    return [render_row(row, REPO) for row in dsv4_rows]


def test_two_rows_two_templates(rendered):
    assert [r.config_file for r in rendered] == [
        "recipes/atom/deepseek-v4/mi355x/disagg-1p1d-tp8-8k1k.yaml",
        "recipes/atom/deepseek-v4/mi355x/disagg-2p1d-dpa-tp8-8k1k.yaml"]
    assert [r.name for r in rendered] == ["mi355x-atom-dsv4-disagg-1p1d-tp8-8k1k",
                                         "mi355x-atom-dsv4-disagg-2p1d-dpa-tp8-8k1k"]


@pytest.mark.parametrize("index,decode_seqs,dp", [(0, 128, False), (1, 2048, True)])
def test_engine_settings_of_the_workload_spec(rendered, index, decode_seqs, dp):
    recipe = rendered[index].recipe
    backend = recipe["backend"]
    assert backend["type"] == "atom"
    assert backend["connector"] == "mooncake"
    assert backend["mooncake_protocol"] == "rdma"
    assert recipe["frontend"]["type"] == "atomesh"
    assert recipe["frontend"]["enable_multiple_frontends"] is False
    assert recipe["frontend"]["args"] == {
        "policy": "random", "log-level": "info", "disable-health-check": True,
        "disable-circuit-breaker": True, "prometheus-port": 29100}
    for role in ("prefill", "decode"):
        cfg = backend["atom_config"][role]
        assert cfg["kv_cache_dtype"] == "fp8"
        assert cfg["block-size"] == 16
        assert cfg["gpu-memory-utilization"] == 0.85
        assert cfg["max-model-len"] == 9472 == 8192 + 1024 + 256
        assert cfg["no-enable_prefix_caching"] is True
        assert cfg.get("enable-dp-attention", False) is dp
        assert cfg.get("enable-tbo", False) is dp
        assert backend[f"{role}_environment"]["ATOM_MOE_GU_ITLV"] == "1"
        assert backend[f"{role}_environment"]["AITER_BF16_FP8_MOE_BOUND"] == "0"
    assert backend["atom_config"]["prefill"]["max-num-seqs"] == 256
    assert backend["atom_config"]["decode"]["max-num-seqs"] == decode_seqs
    assert backend["atom_config"]["decode"]["cudagraph-capture-sizes"] == CUDAGRAPH
    assert "cudagraph-capture-sizes" not in backend["atom_config"]["prefill"]
    assert recipe["slurm"] == {"time_limit": "08:00:00"}
    assert "setup_script" not in recipe


@pytest.mark.parametrize("index,prefill_nodes", [(0, 1), (1, 2)])
def test_image_model_router_and_topology_come_from_the_row(rendered, dsv4_rows, index,
                                                            prefill_nodes):
    recipe, row = rendered[index].recipe, dsv4_rows[index]
    assert recipe["model"] == {"path": "hf:deepseek-ai/DeepSeek-V4-Pro",
                               "container": "rocm/atom-dev:nightly_202609031453",
                               "precision": "fp4"}
    assert recipe["identity"]["container"]["image"] == row["image"]
    assert recipe["identity"]["frameworks"] == {"atomesh": row["router"]["version"]}
    res = recipe["resources"]
    assert (res["prefill_nodes"], res["prefill_workers"], res["decode_nodes"],
            res["decode_workers"]) == (prefill_nodes, prefill_nodes, 1, 1)
    assert res["gpus_per_prefill"] == res["gpus_per_decode"] == 8


def _points(cmd: str) -> list[dict[str, str]]:
    out = []
    for line in command.logical_lines(cmd):
        inv = command._invocation(line)
        if inv:
            out.append(inv.options)
    return out


@pytest.mark.parametrize("index,concs", [(0, [4, 8, 16, 32, 64, 128]),
                                         (1, [256, 512, 768, 1024, 2048])])
def test_benchmark_section_is_generated_from_the_row(rendered, index, concs):
    r = rendered[index]
    bench = r.recipe["benchmark"]
    assert bench["type"] == "custom"
    assert [p.conc for p in r.points] == concs
    points = _points(bench["command"])
    assert [int(p["--max-concurrency"]) for p in points] == concs
    for conc, opts in zip(concs, points, strict=True):
        assert opts["--num-prompts"] == str(10 * conc)
        assert opts["--num-warmups"] == str(2 * conc)
        assert opts["--random-range-ratio"] == "0.8"
        assert opts["--random-input-len"] == "8192"
        assert opts["--random-output-len"] == "1024"
        assert opts["--request-rate"] == "inf"
        assert opts["--ignore-eos"] == ""
        assert opts["--percentile-metrics"] == "ttft,tpot,itl,e2el"
        assert opts["--model"] == "deepseek-ai/DeepSeek-V4-Pro"
        assert opts["--base-url"] == "http://${SRT_FRONTEND_HOST}:${SRT_FRONTEND_PORT}"
        assert opts["--result-filename"] == f"{r.name}-c{conc}.json"
    assert command.parse(bench["command"]).client == "infersweep bench serve"
    assert not re.search(r"\bfor\s+\w+\s+in\b", bench["command"])


def test_all_points_request_48600_measured_requests(rendered):
    assert sum(p.num_prompts for r in rendered for p in r.points) == 48_600
    assert len(rendered[0].points) + len(rendered[1].points) == 6 + 5


def test_rendered_text_is_a_valid_recipe(rendered, tmp_path):
    for r in rendered:
        text = r.text()
        assert text.startswith("# Rendered by `infersweep recipe render`")
        doc = parse_yaml(text, "rendered.yaml")
        assert doc.data == r.recipe
        assert schema.validate(doc, schema.RECIPE_SCHEMA) == []
        assert "{{" not in text and "&id" not in text and "*id" not in text


def test_range_ratio_from_the_row_wins(dsv4_rows):
    row = dict(dsv4_rows[0])
    assert workload.from_row(row).range_ratio == workload.DEFAULT_RANGE_RATIO == 0.8
    row[workload.RANGE_RATIO_FIELD] = 1.0
    r = render_row(row, REPO)
    assert r.workload.range_ratio == 1.0
    assert command.parse(r.recipe["benchmark"]["command"]).options[
        "--random-range-ratio"] == "1"


def test_narrowed_row_renders_only_its_points(dsv4_rows):
    row = dict(dsv4_rows[1], conc=[512])
    r = render_row(row, REPO)
    assert [p.conc for p in r.points] == [512]
    assert len(_points(r.recipe["benchmark"]["command"])) == 1


def test_client_and_result_dir_are_parameters(dsv4_rows):
    r = render_row(dsv4_rows[0], REPO, client="python3 -m infersweep",
                   result_dir="/logs/points")
    cmd = r.recipe["benchmark"]["command"]
    assert "python3 -m infersweep bench serve" in cmd
    assert "mkdir -p /logs/points" in cmd
    assert command.parse(cmd).options["--result-dir"] == "/logs/points"


@pytest.mark.parametrize("client,program", [
    ("python3 /opt/infersweep-bench.pyz", "python3 /opt/infersweep-bench.pyz serve"),
    ("/usr/bin/python3.10 -I /infmax-workspace/b.pyz", "/usr/bin/python3.10 -I /infmax-workspace/b.pyz serve"),
    ("infersweep", "infersweep bench serve"),
    ("/opt/venv/bin/infersweep", "/opt/venv/bin/infersweep bench serve"),
])
def test_a_pyz_client_is_the_bundle_run_as_client_serve(dsv4_rows, client, program):
    cmd = render_row(dsv4_rows[0], REPO, client=client).recipe["benchmark"]["command"]
    parsed = command.parse(cmd)
    assert parsed.client == program
    assert len(parsed.points) == len(dsv4_rows[0]["conc"])


def test_template_problems_stop_the_render(dsv4_rows, tmp_path):
    tdir = tmp_path / "benchmarks" / "multi_node" / "srt-slurm" / "x"
    tdir.mkdir(parents=True)
    src = (REPO / "benchmarks/multi_node/srt-slurm/atom/deepseek-v4/mi355x/"
           "disagg-1p1d-tp8-8k1k.yaml").read_text()
    (tdir / "t.yaml").write_text(src.replace("  type: custom\n", "  type: custom\n"
                                             "  env:\n    CONC: \"{{ row.conc }}\"\n"))
    row = dict(dsv4_rows[0])
    row["prefill"] = dict(row["prefill"], **{"additional-settings": [
        "PREFILL_NODES=1", "CONFIG_FILE=recipes/x/t.yaml"]})
    with pytest.raises(InputError) as exc:
        render_row(row, tmp_path)
    line = src.splitlines().index("  type: custom") + 3  # the CONC line, 1-based
    found = [(d.rule, d.line, d.col) for d in exc.value.diagnostics]
    assert found == [("template-concurrency", line, 5),  # the key CONC
                     ("template-concurrency", line, 12)]  # the {{ row.conc }} placeholder
    assert all(d.path.endswith("t.yaml") for d in exc.value.diagnostics)


def test_yaml_of_rendered_recipe_keeps_template_order(rendered):
    keys = list(yaml.safe_load(rendered[0].text()))
    assert keys[:4] == ["name", "model", "identity", "slurm"]
    assert keys[-1] == "benchmark"
