"""The replay client's command for a row (InferenceX's flags), the scaled-down window, the
pinned client's venv check, and an agentic row's recipe and engine plan."""

from __future__ import annotations

import json
import shlex

import pytest

from infersweep.agentic import replaycmd
from infersweep.agentic.client import STAMP, locate
from infersweep.agentic.replay import scaled_settings
from infersweep.diagnostics import InputError
from infersweep.recipe import agenticwork
from infersweep.recipe.render import render_row
from infersweep.rowjobs.engineplan import NATIVE_CONTEXT, engine_plan

ROW = {"image": "lmsysorg/sglang:v0.5.9-rocm700-mi35x", "model": "deepseek-ai/DeepSeek-V4-Pro",
       "model-prefix": "dsv4", "precision": "fp4", "framework": "sglang",
       "runner": "cluster:mi355x-amds", "tp": 8, "pp": 1, "dcp-size": 1, "pcp-size": 1,
       "ep": 1, "dp-attn": False, "spec-decoding": "none", "conc": 8,
       "kv-offloading": "dram", "kv-offload-backend": {"name": "hicache"},
       "total-cpu-dram-gb": 2399, "duration": 3600, "exp-name": "dsv4_tp8_conc8_kvdram-hicache",
       "scenario-type": "agentic-coding", "run-eval": False}


def plan(**kw) -> replaycmd.ReplayPlan:
    base = dict(url="http://h:1", model="m", tokenizer="t", conc=8,
                traces=replaycmd.Traces(public_alias="semianalysis_cc_traces_weka_062126"),
                artifact_dir="/out", framework="sglang")
    return replaycmd.ReplayPlan(**(base | kw))


def flag(argv: list[str], name: str) -> str:
    return argv[argv.index(name) + 1]


def test_a_full_run_uses_inferencex_flags_and_no_override():
    argv = replaycmd.argv(plan())
    assert argv[:4] == ["aiperf", "profile", "--scenario", "inferencex-agentx-mvp"]
    for name, want in (("--concurrency", "8"), ("--benchmark-duration", "3600"),
                       ("--random-seed", "42"), ("--failed-request-threshold", "0.1"),
                       ("--trajectory-start-min-ratio", "0.25"),
                       ("--trajectory-start-max-ratio", "0.75"),
                       ("--warmup-requests-per-lane", "10"),
                       ("--trace-idle-gap-cap-seconds", "300"),
                       ("--warmup-grace-period", "1800"), ("--endpoint-type", "chat"),
                       ("--public-dataset", "semianalysis_cc_traces_weka_062126")):
        assert flag(argv, name) == want, name
    assert {"--streaming", "--use-server-token-count", "--no-gpu-telemetry"} <= set(argv)
    assert "--unsafe-override" not in argv and "--input-file" not in argv


def test_local_traces_or_a_short_window_need_the_override_and_say_why():
    local = plan(traces=replaycmd.Traces(local_dir="/traces", entries=6), duration_s=30)
    argv = replaycmd.argv(local)
    assert "--unsafe-override" in argv
    assert flag(argv, "--input-file") == "/traces" and flag(argv, "--num-dataset-entries") == "6"
    assert "--public-dataset" not in argv
    assert len(local.unsafe) == 2


@pytest.mark.parametrize(("framework", "header"), [
    ("sglang", "AIPERF_HTTP_X_SMG_ROUTING_KEY_FROM_CORRELATION_ID"),
    ("vllm", "AIPERF_HTTP_X_SESSION_ID_FROM_CORRELATION_ID"),
    ("dynamo-vllm", "AIPERF_HTTP_X_DYNAMO_SESSION_ID_FROM_CORRELATION_ID")])
def test_session_affinity_switches_the_routers_header(framework, header):
    assert header in replaycmd.environment(plan(framework=framework, session_affinity=True))
    assert header not in replaycmd.environment(plan(framework=framework))


def test_scale_down_shrinks_window_warmup_and_grace_and_records_them():
    assert scaled_settings(1) is None
    s = scaled_settings(120)
    assert s.record() == {"duration": {"original": 3600, "run": 30},
                          "warmup_requests_per_lane": {"original": 10, "run": 1},
                          "warmup_grace_period": {"original": 1800, "run": 30}}
    assert scaled_settings(10_000).duration[1] == 20  # never below a usable window


def test_a_venv_without_the_pins_stamp_is_refused_with_the_install_command(tmp_path):
    with pytest.raises(InputError) as err:
        locate(tmp_path / "venv")
    assert "infersweep agentic client install" in str(err.value)
    (tmp_path / "venv").mkdir()
    (tmp_path / "venv" / STAMP).write_text(json.dumps(
        {"distribution": "agentx-harness", "version": "0.0.1", "lock-sha256": "x"}))
    with pytest.raises(InputError) as err:
        locate(tmp_path / "venv")
    assert "not the pinned" in str(err.value)


def test_an_agentic_row_renders_one_replay_per_concurrency_carrying_its_row():
    rendered = render_row({**ROW, "conc": 8})
    assert rendered.source == "framework-default"
    cmd = rendered.recipe["benchmark"]["command"]
    assert cmd.count("agentic replay") == 1 and "--conc 8" in cmd
    carried = json.loads(shlex.split(cmd.split("--row-json ", 1)[1].split(" || ")[0])[0])
    assert carried == {**ROW, "conc": 8}
    assert [p.result_file for p in rendered.points] == [
        f"{rendered.name}-c8{agenticwork.RESULT_SUFFIX}"]
    engine = rendered.recipe["backend"]["sglang_config"]["aggregated"]
    assert engine["enable-hierarchical-cache"] is True and engine["page-size"] == 64
    assert engine["hicache-size"] == 300  # 2,399 GB over 8 ranks, rounded up


def test_an_agentic_engine_plan_models_the_recipes_cache():
    rendered = render_row({**ROW, "conc": 8})
    [worker], router = engine_plan(rendered.recipe, ROW["model"], agentic=True,
                                   total_cpu_dram_gb=ROW["total-cpu-dram-gb"])
    args = worker["args"]
    assert "--enable-prefix-caching" in args and flag(args, "--page-size") == "64"
    assert flag(args, "--max-model-len") == str(NATIVE_CONTEXT)
    plain, _ = engine_plan(rendered.recipe, ROW["model"])
    assert "--enable-prefix-caching" not in plain[0]["args"]  # fixed-seq plans are unchanged


def test_a_run_eval_agentic_row_runs_gsm8k_after_its_replays():
    cmd = render_row({**ROW, "conc": 8, "run-eval": True}).recipe["benchmark"]["command"]
    assert cmd.index("agentic replay") < cmd.index("eval gsm8k")
    assert "--concurrency 8" in cmd
