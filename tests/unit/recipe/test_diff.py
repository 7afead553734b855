"""`recipe diff` on the older hand-written recipes against the rendered ones: exactly the
known differences of the port (memory 0.84 -> 0.85 on 1P1D, range ratio 1.0 -> 0.8, AToMesh
instead of Infera, the new image, ...), and nothing for formatting or key order."""

from __future__ import annotations

import json

import pytest
import yaml

from infersweep.recipe import diff
from infersweep.recipe.render import render_row
from tests.conftest import REPO
from tests.unit.recipe.conftest import TEMPLATES

REF = {0: "atom_deepseek-v4_mi355x_disagg-1p1d-tp8-8k1k.yaml",
       1: "atom_deepseek-v4_mi355x_disagg-2p1d-dpa-tp8-8k1k.yaml"}

# What every port of the two recipes changes (section, key), beyond the per-topology extras.
COMMON = {
    ("model", "model.container"), ("model", "identity.container.image"),
    ("model", "identity.frameworks.atom"), ("model", "identity.frameworks.infera"),
    ("model", "identity.frameworks.atomesh"),
    ("backend", "enable_kv_events"),
    ("backend prefill", "max-model-len"), ("backend decode", "max-model-len"),
    ("backend decode", "cudagraph-capture-sizes"),
    ("front end", "type"), ("front end", "--router-policy"), ("front end", "--policy"),
    ("front end", "--log-level"), ("front end", "--disable-health-check"),
    ("front end", "--disable-circuit-breaker"), ("front end", "--prometheus-port"),
    ("benchmark", "client"), ("benchmark", "--random-range-ratio"),
    ("benchmark", "--result-dir"), ("benchmark", "--result-filename"),
    ("slurm", "sbatch --cpus-per-task"), ("slurm", "sbatch --mem"),
    ("slurm", "sbatch --exclusive"),
}
ENV_KEYS = {
    "AITER_LOG_LEVEL (all processes)", "ATOM_LOG_LEVEL (all processes)",
    "LOGLEVEL (all processes)", "LOG_LEVEL (all processes)",
    "PYTHONDONTWRITEBYTECODE (all processes)", "SAFETENSORS_FAST_GPU (all processes)",
    "VLLM_LOG_LEVEL (all processes)",
    "OMP_NUM_THREADS (prefill)", "PYTHONPATH (prefill)", "OMP_NUM_THREADS (decode)",
    "PYTHONPATH (decode)", "HF_HOME (front end)", "HF_HUB_CACHE (front end)",
    "HUGGINGFACE_HUB_CACHE (front end)", "PYTHONPATH (front end)",
    "PYTHONUNBUFFERED (front end)", "PYTHONUNBUFFERED (benchmark)"}
STATEMENTS_OLD = {"set -euo pipefail", "result_root=/results/${SLURM_JOB_ID}",
                  'mkdir -p "/results/${SLURM_JOB_ID}/fixed-seq"', "archive_runtime_logs() {",
                  'tar -C /logs -czf "/results/${SLURM_JOB_ID}/runtime-logs.tar.gz" . '
                  "2>/dev/null || true", "}", "trap archive_runtime_logs EXIT"}
STATEMENTS_NEW = {"set -uo pipefail", "mkdir -p /logs/fixed-seq", "rc=0", 'exit "$rc"',
                  "after each point: || rc=1"}


@pytest.fixture(scope="module")
def rendered(dsv4_rows):
    return [render_row(row, REPO).recipe for row in dsv4_rows]


def _load(path):
    return yaml.safe_load(path.read_text())


def _by_key(diffs):
    return {(d.section, d.key): (d.a, d.b) for d in diffs}


@pytest.mark.parametrize("index", [0, 1])
def test_reference_vs_rendered_shows_exactly_the_port(reference, rendered, index):
    found = _by_key(diff.differences(_load(reference / REF[index]), rendered[index]))
    expected = set(COMMON) | {("environment", k) for k in ENV_KEYS}
    expected |= {("benchmark", f"statement: {s}") for s in STATEMENTS_OLD | STATEMENTS_NEW}
    if index == 0:  # only the 1P1D recipe had 0.84 and the prompt floor of 16
        expected |= {("backend prefill", "gpu-memory-utilization"),
                     ("backend decode", "gpu-memory-utilization"),
                     ("benchmark", "statement: if (( num_prompts < 16 )); then num_prompts=16; fi")}
    assert set(found) == expected
    assert found[("benchmark", "--random-range-ratio")] == ("1.0", "0.8")
    assert found[("front end", "type")] == ("infera", "atomesh")
    assert found[("model", "model.container")] == ("infera-atom-v0.1.1",
                                                   "rocm/atom-dev:nightly_202609031453")
    assert found[("backend decode", "max-model-len")] == (None, "9472")
    if index == 0:
        assert found[("backend prefill", "gpu-memory-utilization")] == ("0.84", "0.85")


@pytest.mark.parametrize("index", [0, 1])
def test_points_and_per_point_counts_are_unchanged_by_the_port(reference, rendered, index):
    sa = diff.sections(_load(reference / REF[index]))["benchmark"]
    sb = diff.sections(rendered[index])["benchmark"]
    for key in ("concurrencies", "--num-warmups", "--num-prompts", "--max-concurrency",
                "--random-input-len", "--random-output-len", "--request-rate", "--ignore-eos",
                "--percentile-metrics", "--endpoint", "--backend", "--model", "--tokenizer"):
        assert sa[key] == sb[key], key
    assert sb["--num-warmups"] == "2 x conc" and sb["--num-prompts"] == "10 x conc"


def test_template_1p1d_vs_2p1d_is_the_topology_and_dp_attention():
    a = _load(TEMPLATES / "disagg-1p1d-tp8-8k1k.yaml")
    b = _load(TEMPLATES / "disagg-2p1d-dpa-tp8-8k1k.yaml")
    found = _by_key(diff.differences(a, b))
    assert found == {
        ("topology", "prefill_nodes"): (1, 2), ("topology", "prefill_workers"): (1, 2),
        ("backend prefill", "enable-dp-attention"): (None, "(flag)"),
        ("backend prefill", "enable-tbo"): (None, "(flag)"),
        ("backend decode", "max-num-seqs"): ("128", "2048"),
        ("backend decode", "enable-dp-attention"): (None, "(flag)"),
        ("backend decode", "enable-tbo"): (None, "(flag)"),
        ("environment", "ATOM_CPU_AFFINITY (prefill)"): (None, "1"),
        ("environment", "GPU_MAX_HW_QUEUES (prefill)"): (None, "5"),
        ("environment", "ATOM_CPU_AFFINITY (decode)"): (None, "1"),
        ("environment", "GPU_MAX_HW_QUEUES (decode)"): (None, "5"),
        ("other", "name"): ("mi355x-atom-dsv4-disagg-1p1d-tp8-8k1k",
                            "mi355x-atom-dsv4-disagg-2p1d-dpa-tp8-8k1k"),
    }


def test_formatting_key_order_anchors_and_quoting_are_ignored(rendered):
    a = rendered[1]
    shuffled = {k: a[k] for k in reversed(list(a))}
    b = json.loads(json.dumps(shuffled))
    b["backend"]["atom_config"]["decode"]["gpu-memory-utilization"] = "0.85"  # quoted
    b["resources"]["gpus_per_node"] = "8"
    env = b["backend"].pop("prefill_environment")
    b["environment"] = {**b["environment"], **{k: v for k, v in env.items()
                                               if b["backend"]["decode_environment"].get(k) == v}}
    b["frontend"]["env"] = {}
    b["backend"]["prefill_environment"] = {}
    # moving the worker variables into `environment` changes what the front end and the
    # client see, and nothing else
    found = _by_key(diff.differences(a, b))
    assert {k for _, k in found} == {f"{v} ({p})" for v in env for p in ("front end",
                                                                         "benchmark")}


def test_defaults_count_as_values():
    a = {"resources": {"gpus_per_node": 8, "prefill_nodes": 1, "prefill_workers": 1,
                       "decode_nodes": 1, "decode_workers": 1},
         "backend": {"type": "atom"}, "health_check": {"max_attempts": 180}}
    b = {"resources": {"gpus_per_node": 8, "prefill_nodes": 1, "prefill_workers": 1,
                       "decode_nodes": 1, "decode_workers": 1, "gpus_per_prefill": 8,
                       "gpus_per_decode": 8},
         "backend": {"type": "atom", "connector": "mooncake", "mooncake_protocol": "rdma"},
         "frontend": {"enable_multiple_frontends": True},
         "health_check": {"interval_seconds": 10}}
    assert diff.differences(a, b) == []


def test_false_and_null_engine_flags_are_not_passed():
    a = {"backend": {"atom_config": {"prefill": {"enable-tbo": False, "x": None, "y": 1}}}}
    b = {"backend": {"atom_config": {"prefill": {"y": "1"}}}}
    assert diff.differences(a, b) == []


def test_text_report_and_json(run_cli, reference, tmp_path, dsv4_rows):
    code, out, err = run_cli("recipe", "render", "--row", json.dumps(dsv4_rows[0]),
                             "--repo", REPO, "--output", tmp_path / "r.yaml")
    assert (code, out, err) == (0, "", "")
    code, out, _ = run_cli("recipe", "diff", reference / REF[0], tmp_path / "r.yaml")
    assert code == 0
    assert "[backend prefill]\n  gpu-memory-utilization: 0.84 -> 0.85\n" in out
    assert "  --random-range-ratio: 1.0 -> 0.8\n" in out
    assert "  type: infera -> atomesh\n" in out
    assert "  - set -euo pipefail\n" in out and "  + set -uo pipefail\n" in out
    code, out, _ = run_cli("recipe", "diff", reference / REF[0], tmp_path / "r.yaml",
                           "--format", "json", "--exit-code")
    assert code == 1
    report = json.loads(out)
    assert report["same"] is False
    assert {"section": "benchmark", "key": "--random-range-ratio", "a": "1.0", "b": "0.8"} \
        in report["differences"]
    code, out, _ = run_cli("recipe", "diff", tmp_path / "r.yaml", tmp_path / "r.yaml",
                           "--exit-code")
    assert (code, out) == (0, f"no semantic differences between {tmp_path / 'r.yaml'} and "
                              f"{tmp_path / 'r.yaml'}\n")
