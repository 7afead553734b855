"""A launch on a Slurm fleet readies an agentic row's inputs before anything is allocated:
the pinned client, and the row's corpus fetched from the Hub (a double here) into the cache
the job reads; a dataset the Hub lacks fails in seconds. A local corpus is checked instead."""

from __future__ import annotations

import json
import time

import pytest

from infersweep.diagnostics import InputError
from infersweep.launch import agenticinputs
from tests.agenticclient import VENV_ENV, client_venv
from tests.hfhubdouble import HubDouble

pytestmark = pytest.mark.integration

ROW = {"model": "deepseek-ai/DeepSeek-V4-Pro", "model-prefix": "dsv4", "framework": "sglang",
       "scenario-type": "agentic-coding", "conc": 4}
TRACE = {"id": "t0", "models": ["m"], "block_size": 64, "hash_id_scope": "local",
         "requests": [{"t": 0.0, "type": "n", "model": "m", "in": 128, "out": 8,
                       "hash_ids": [1, 2]}]}


def test_the_rows_corpus_is_fetched_before_the_job_and_a_missing_one_fails_fast(tmp_path):
    venv = client_venv()
    with HubDouble() as hub:
        sha = hub.add_commit("semianalysisai/cc-traces-weka-062126",
                             {"traces.jsonl": (json.dumps(TRACE) + "\n").encode()})
        env = {VENV_ENV: str(venv), "HF_ENDPOINT": hub.url,
               "HF_HUB_CACHE": str(tmp_path / "hub")}
        said = []
        agenticinputs.ready(ROW, env, say=said.append)
        assert sha[:12] in said[0] and "semianalysis_cc_traces_weka_062126" in said[0]
        assert (tmp_path / "hub" / "datasets--semianalysisai--cc-traces-weka-062126").is_dir()
        t0 = time.monotonic()
        with pytest.raises(InputError, match="no such dataset"):
            agenticinputs.ready({**ROW, "model-prefix": "qwen3.5"}, env, say=said.append)
        assert time.monotonic() - t0 < 30


def test_a_local_corpus_is_checked_at_file_line_col_instead(tmp_path):
    venv = client_venv()
    traces = tmp_path / "traces"
    traces.mkdir()
    (traces / "t.json").write_text(json.dumps({**TRACE, "extra": 1}, indent=1))
    env = {VENV_ENV: str(venv), "INFERSWEEP_AGENTIC_TRACES": str(traces)}
    with pytest.raises(InputError) as err:
        agenticinputs.ready(ROW, env, say=lambda _: None)
    assert "t.json:" in str(err.value) and "extra" in str(err.value)
