"""A row marked run-eval gets the GSM8K eval step after its throughput points."""

from __future__ import annotations

import shlex

from infersweep.recipe import workload

ROW = {"model": "deepseek-ai/DeepSeek-V4-Pro", "isl": 8192, "osl": 1024, "conc": [4, 128]}


def test_no_eval_step_without_run_eval():
    text = workload.command(workload.from_row(ROW), "r")
    assert "eval gsm8k" not in text


def test_the_eval_step_follows_the_points_and_writes_beside_them():
    w = workload.from_row({**ROW, "run-eval": True, "eval-conc": 64})
    text = workload.command(w, "r", result_dir="/logs/fixed-seq")
    lines = text.splitlines()
    assert text.index("eval gsm8k") > text.index("r-c128.json")
    assert lines[-1] == 'exit "$rc"'
    step = text[text.index("infersweep eval gsm8k"):text.index('|| echo')].replace("\\\n", " ")
    words = shlex.split(step.replace("${INFERSWEEP_EVAL_ARGS:-}", ""))
    assert words[words.index("--concurrency") + 1] == "64"
    assert words[words.index("--output-dir") + 1] == "/logs/fixed-seq/eval"
    assert words[words.index("--model") + 1] == ROW["model"]
    assert "${INFERSWEEP_EVAL_ARGS:-}" in step
    # the eval's exit does not fail the job: the throughput points stand either way
    assert "rc=1" not in text[text.index("eval gsm8k"):]


def test_without_eval_conc_the_eval_runs_at_the_highest_concurrency():
    assert workload.from_row({**ROW, "run-eval": True}).eval_conc == 128


def test_the_bundle_cannot_run_evals_so_the_step_uses_infersweep():
    w = workload.from_row({**ROW, "run-eval": True})
    text = workload.command(w, "r", client="python3 /opt/infersweep-bench.pyz")
    assert "python3 /opt/infersweep-bench.pyz serve" in text
    assert "\ninfersweep eval gsm8k" in text
