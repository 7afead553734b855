"""``infersweep agentic traces`` and ``tokenizer`` on the command line."""

from __future__ import annotations

import json

from tests.conftest import REPO


def test_generate_then_check(run_cli, tmp_path):
    out = tmp_path / "c"
    code, stdout, _ = run_cli("agentic", "traces", "generate", "--out", out, "--traces", 3,
                              "--turns", "4-5", "--seed", 9, "--no-progress")
    assert code == 0 and "wrote 3 traces" in stdout
    code, stdout, _ = run_cli("agentic", "traces", "check", out, "--json")
    assert code == 0
    stats = json.loads(stdout)
    assert stats["traces"] == 3 and 12 <= stats["turns"] <= 15
    assert stats["hit_rate"] == stats["hit_blocks"] / stats["total_blocks"]


def test_check_exits_1_with_located_errors(run_cli, tmp_path):
    f = tmp_path / "t.json"
    f.write_text('{"id": "a", "models": ["m"], "block_size": 64, "hash_id_scope": "local",\n'
                 ' "requests": [{"t": 0, "type": "n", "model": "m", "in": 64, "out": 1,'
                 ' "prompt": "hi"}]}')
    code, stdout, stderr = run_cli("agentic", "traces", "check", f)
    assert code == 1 and stdout == ""
    assert f"error: {f}:2:71: [trace-schema] unknown key 'prompt' in request 0" in stderr


def test_source_prints_alias_dataset_revision(run_cli):
    code, stdout, _ = run_cli("agentic", "traces", "source", "--model-prefix", "qwen3.5",
                              "--lock", REPO / "configs" / "runtimes.yaml", "--json")
    assert code == 0
    assert json.loads(stdout) | {"reason": ""} == {
        "alias": "semianalysis_cc_traces_weka_062126_256k",
        "dataset": "semianalysisai/cc-traces-weka-062126-256k", "revision": "main",
        "commit": None, "reason": ""}


def test_generate_refuses_bad_ranges(run_cli, tmp_path):
    code, _, stderr = run_cli("agentic", "traces", "generate", "--out", tmp_path / "c",
                              "--turns", "9-2")
    assert code == 2 and "0 <= N <= M" in stderr


def test_tokenizer_layout(run_cli, tmp_path):
    from infersweep.agentic.tokenizer import write_word_tokenizer

    src = write_word_tokenizer(tmp_path / "w", ["a"])
    code, stdout, _ = run_cli("agentic", "tokenizer", "layout", src, "--hf-home",
                              tmp_path / "hf", "--name", "local/w")
    assert code == 0 and stdout.startswith("local/w\n")
    assert (tmp_path / "hf/hub/models--local--w/refs/main").is_file()
