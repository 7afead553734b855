"""InferenceX's agentic-coding rows against upstream srt-slurm v1.0.68: how many render (the
agentic framework defaults, single- and multi-node) and srtctl's dry run accepts every one of
its dialects (the figures of docs/compatibility.md, Agentic-coding rows)."""

from __future__ import annotations

import json

import pytest

from tests.integration.recipe_coverage.conftest import CATALOGS, RUNNERS
from tests.integration.recipe_coverage.test_inferencex_coverage import (  # noqa: F401
    run_cli_module,
)

pytestmark = pytest.mark.integration


def test_agentic_rows_render_and_srtctl_accepts_them(upstream_checkout, upstream_srtctl,
                                                     run_cli_module):  # noqa: F811
    code, out, err = run_cli_module(
        "recipe", "coverage", "--config-files", *CATALOGS, "--runner-config", RUNNERS,
        "--srtctl", upstream_checkout, "--scenario", "agentic-coding", "--format", "json",
        "--no-progress")
    assert code == 0, err
    doc = json.loads(out)
    s = doc["summary"]
    assert (s["rows"], s["rendered"], s["accepted"], s["rejected"], s["not-dry-run"]) == \
        (746, 452, 440, 0, 12)
    by = {}
    for row in doc["rows"]:
        if row["outcome"] == "rendered":
            by[row["config-file"]] = by.get(row["config-file"], 0) + 1
    assert by == {"benchmarks/single_node/srt-slurm/agentic/defaults/sglang.yaml": 322,
                  "benchmarks/single_node/srt-slurm/agentic/defaults/vllm.yaml": 106,
                  "benchmarks/single_node/srt-slurm/agentic/defaults/atom.yaml": 12,
                  "benchmarks/multi_node/srt-slurm/agentic/defaults/sglang-disagg.yaml": 12}
    assert s["refused"] == {"recipe file not found": 239,
                            "single-node: no template for the framework": 22,
                            "refused by a template rule": 20,
                            "CONFIG_FILE is not recipes/<path>": 13}
