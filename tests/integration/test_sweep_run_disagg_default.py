"""A disaggregated config that names no recipe runs end to end on the local executor with its
framework's default (`sglang-disagg`, as InferenceX's AMD catalog writes such entries), and
its results pass `results check`: a router that is not AToMesh pins no engine revision."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from infersweep.rowjobs import manifest as manifests
from tests.conftest import FROZEN_RUNNERS
from tests.livecatalog import frozen_checkout

pytestmark = pytest.mark.integration

KEY = "qwen3-fp8-mi355x-sglang-disagg"
CATALOG = f"""
{KEY}:
  image: lmsysorg/sglang:v0.5.16-rocm720-mi35x
  model: Qwen/Qwen3-32B
  model-prefix: qwen3
  precision: fp8
  framework: sglang-disagg
  runner: mi355x-disagg
  router: {{ name: sglang-router, version: "0.3.2" }}
  kv-p2p-transfer: mori
  multinode: true
  disagg: true
  scenarios:
    fixed-seq-len:
    - isl: 1024
      osl: 1024
      search-space:
      - conc-list: [4, 8]
        prefill: {{ num-worker: 1, tp: 8, ep: 1, dp-attn: false,
                   additional-settings: [PREFILL_NODES=1] }}
        decode: {{ num-worker: 2, tp: 8, ep: 8, dp-attn: true,
                  additional-settings: [DECODE_NODES=2, DECODE_MTP_SIZE=0] }}
"""


def test_a_disaggregated_row_without_a_recipe_runs_with_its_framework_default(tmp_path):
    master = tmp_path / "sgd-master.yaml"
    master.write_text(CATALOG)
    out = tmp_path / "out"
    p = subprocess.run(
        [sys.executable, "-m", "infersweep", "sweep", "run", "--repo", str(frozen_checkout()),
         "--config-files", str(master), "--runner-config", str(FROZEN_RUNNERS),
         "--config-keys", KEY, "--scale-down", "64", "--no-evals", "--output", str(out)],
        capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "2 of 2 point(s) present" in p.stdout
    assert "stageable: yes" in p.stdout, p.stdout + p.stderr
    (job,) = [d for d in (out / KEY).iterdir() if d.is_dir()]
    recipe = (job / "recipe.yaml").read_text()
    assert "defaults/sglang-disagg.yaml (its framework's default" in recipe.splitlines()[0]
    # the simulator runs the default's topology: one prefill worker, two decode workers of
    # eight DP-attention ranks each
    plan = json.loads((job / "local-job.json").read_text())
    roles = [(w["role"], w["args"][w["args"].index("--dp-size") + 1] if "--dp-size" in
              w["args"] else "1") for w in plan["workers"]]
    assert roles == [("prefill", "1"), ("decode", "8"), ("decode", "8")]
    manifest = manifests.load(job / manifests.FILENAME)
    assert manifest["provenance"]["atom-revision"] is None
    assert [e["status"] for e in manifest["points"]] == ["present", "present"]


def test_engine_revision_is_pinned_by_an_atomesh_commit_only():
    from infersweep.matrix.rows import engine_revision

    sha = "f95ef3ec30a16876a676e0af96d60f8e0605c7c5"
    assert engine_revision({"router": {"name": "atomesh", "version": sha}}) == sha
    assert engine_revision({"router": {"name": "atomesh", "version": "0.1.1"}}) is None
    assert engine_revision({"router": {"name": "sglang-router", "version": "0.3.2"}}) is None
    assert engine_revision({}) is None
