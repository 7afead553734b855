"""A small srt-slurm checkout for tests: a recipes/ folder with the shapes srtctl v1 reads
(a plain recipe, an override file, a sweep), and rows that name them."""

from __future__ import annotations

import copy
import textwrap
from pathlib import Path

PLAIN = """\
name: qwen-1p1d
model: {path: qwen3-32b, container: sglang-image, precision: fp8}
resources:
  gpu_type: h100
  gpus_per_node: 8
  prefill_nodes: 1
  prefill_workers: 1
  decode_nodes: 1
  decode_workers: 1
frontend: {type: sglang, enable_multiple_frontends: false}
backend:
  type: sglang
  sglang_config:
    prefill: {tensor-parallel-size: 8}
    decode: {tensor-parallel-size: 8}
benchmark:
  type: sa-bench
  isl: 1024
  osl: 1024
  concurrencies: 4x8x16
  req_rate: inf
  client_placement: head
  env: {BENCH_NOTE: kept}
"""

OVERRIDES = """\
base:
  name: ds
  model: {path: dsr1, container: trt-image, precision: fp4}
  resources:
    gpu_type: gb200
    gpus_per_node: 4
    prefill_nodes: 2
    prefill_workers: 2
    decode_nodes: 2
    decode_workers: 1
  backend:
    type: trtllm
  benchmark: {type: sa-bench, isl: 8192, osl: 1024, concurrencies: [64]}
override_wide:
  resources:
    decode_nodes: 4
zip_override_lowlat:
  name: [ds-a, ds-b]
  resources:
    prefill_workers: [1, 2]
    prefill_nodes: [1, 2]
"""

SWEEP = """\
name: swept
resources: {gpu_type: h100, gpus_per_node: 8, prefill_nodes: 1, prefill_workers: 1,
            decode_nodes: 1, decode_workers: 1}
backend: {type: sglang}
sweep:
  chunk: [1024, 2048]
"""


def make(root: Path) -> Path:
    """The checkout at ``root``: recipes/qwen/plain.yaml, recipes/ds/8k1k.yaml (override
    file), recipes/qwen/sweep.yaml."""
    for rel, text in (("qwen/plain.yaml", PLAIN), ("ds/8k1k.yaml", OVERRIDES),
                      ("qwen/sweep.yaml", SWEEP)):
        path = root / "recipes" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


def row(base: dict, config_file: str | None, *, prefill=(1, 8), decode=(1, 8),
        settings=(), decode_settings=()) -> dict:
    """``base`` (a multi-node matrix row) naming ``config_file``, with these worker counts and
    TPs and these extra settings (KEY=VALUE) in prefill and decode."""
    out = copy.deepcopy(base)
    for role, (workers, tp), extra in (("prefill", prefill, settings),
                                       ("decode", decode, decode_settings)):
        out[role]["num-worker"], out[role]["tp"] = workers, tp
        out[role]["additional-settings"] = list(extra)
    if config_file is not None:
        out["prefill"]["additional-settings"].append(f"CONFIG_FILE={config_file}")
    return out
