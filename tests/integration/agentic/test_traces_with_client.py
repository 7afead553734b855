"""Our traces against the real replay client (agentx-harness, in its own venv).

The client's own code decides: its pydantic models accept the generated corpus and refuse
a broken one (which our check refuses first, at file:line:col); its loader's theoretical
prefix-cache pre-pass gives the hit rate ours gives; ``fetch`` downloads through its
``huggingface_hub`` from a double of the Hub; and it loads the word-level tokenizer offline
from the laid-out cache entry, synthesising prompt blocks with no unknown words and one
token per whitespace word.
"""

from __future__ import annotations

import json
import os
import subprocess
import time

import orjson
import pytest

from infersweep.agentic.sources import TraceSource, fetch
from infersweep.agentic.tokenizer import (
    client_corpus_words,
    layout_tokenizer,
    write_word_tokenizer,
)
from infersweep.agentic.tracegen import GenParams, write_corpus
from infersweep.agentic.traces import check_corpus, load_corpus
from infersweep.agentic.tracestats import corpus_stats
from infersweep.diagnostics import InputError
from tests.agenticclient import client_python
from tests.hfhubdouble import HubDouble

pytestmark = pytest.mark.integration

# Runs under the client's Python: validate every file with the client's loader, then run
# its theoretical prefix-cache pre-pass (the counts it stamps on every turn) and sum them.
LOADER_SCRIPT = r"""
import json, sys
from aiperf.dataset.loader.weka_trace import WekaTraceLoader
loader = object.__new__(WekaTraceLoader)  # only the pure planning methods are used
loader._path = None
loader._user_block_size_override = None
loader._fixed_schedule_start_offset = loader._fixed_schedule_end_offset = None
loader._max_isl = None
from pathlib import Path
data, errors = {}, []
for f in sorted(Path(sys.argv[1]).glob("*.json")):
    try:
        tr = loader._load_single_file(f)
    except ValueError as e:
        errors.append(str(e))
        continue
    data[tr.id] = [tr]
hits = total = 0
if data and not errors:
    plans = loader._build_reconstruction_plans(data)
    values = loader._build_shared_metric_values(plans.parent_plans, plans.child_plans,
                                                plans.flat_plans)
    for per_turn in values.values():
        for h, t in per_turn.values():
            hits, total = hits + h, total + t
print(json.dumps({"traces": len(data), "errors": errors, "hits": hits, "total": total}))
"""


def run_client(script: str, *args, env=None) -> dict:
    proc = subprocess.run([str(client_python()), "-c", script, *map(str, args)],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})})
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def corpus_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("traces") / "corpus"
    write_corpus(GenParams(traces=12, subagents=0.4, max_context=8192, seed=5), out)
    return out


def test_the_client_accepts_the_corpus_and_computes_our_hit_rate(corpus_dir):
    client_python()
    ours = corpus_stats(load_corpus(corpus_dir))
    theirs = run_client(LOADER_SCRIPT, corpus_dir)
    assert theirs["errors"] == [] and theirs["traces"] == 12
    assert ours.subagents > 0
    assert abs(100 * ours.hit_rate - 100 * theirs["hits"] / theirs["total"]) < 0.5
    assert (ours.hit_blocks, ours.total_blocks) == (theirs["hits"], theirs["total"])


def test_a_broken_corpus_is_refused_by_both_ours_located(tmp_path, corpus_dir):
    client_python()
    bad = tmp_path / "bad"
    bad.mkdir()
    trace = orjson.loads((corpus_dir / "trace-0000.json").read_bytes())
    trace["requests"][1]["prompt_text"] = "hello"
    (bad / "trace-0000.json").write_bytes(orjson.dumps(trace, option=orjson.OPT_INDENT_2))
    ours = check_corpus(bad)
    assert len(ours) == 1
    d = ours[0]
    line = (bad / "trace-0000.json").read_text().splitlines()[d.line - 1]
    assert line[d.col - 1:].startswith('"prompt_text"')
    assert d.message == "unknown key 'prompt_text' in request 1"
    theirs = run_client(LOADER_SCRIPT, bad)
    assert len(theirs["errors"]) == 1
    assert "prompt_text" in theirs["errors"][0] and "Extra inputs are not permitted" in \
        theirs["errors"][0]


def test_fetch_downloads_the_revision_and_refuses_a_missing_one_in_seconds(tmp_path,
                                                                          corpus_dir):
    python = client_python()
    lines = b"".join(orjson.dumps(orjson.loads(p.read_bytes())) + b"\n"
                     for p in sorted(corpus_dir.glob("*.json")))
    with HubDouble() as hub:
        sha = hub.add_commit("semianalysisai/cc-traces-weka-test", {"traces.jsonl": lines})
        src = TraceSource("x", "semianalysisai/cc-traces-weka-test", "main", sha)
        got = fetch(src, tmp_path / "hub", endpoint=hub.url, python=python)
        assert got.commit == sha and got.path.name == sha
        assert (tmp_path / "hub" / "datasets--semianalysisai--cc-traces-weka-test" / "refs"
                / "main").read_text() == sha
        assert len(load_corpus(got.path).traces) == 12
        t0 = time.monotonic()
        with pytest.raises(InputError, match="has no revision 'v2'"):
            fetch(TraceSource("x", src.dataset, "v2"), tmp_path / "hub", endpoint=hub.url,
                  python=python)
        hub.add_commit(src.dataset, {"traces.jsonl": lines[: len(lines) // 2]})
        with pytest.raises(InputError, match="now resolves to"):
            fetch(src, tmp_path / "hub", endpoint=hub.url, python=python)
        assert time.monotonic() - t0 < 10
        assert ("GET", f"/api/datasets/{src.dataset}/revision/v2") in hub.requests


# Under the client's Python, offline: load the laid-out tokenizer by name, build the coding
# corpus with the run's seed, synthesise blocks for hash ids, count.
TOKENIZER_SCRIPT = r"""
import json, sys
from aiperf.common import random_generator as rng
from aiperf.common.tokenizer import Tokenizer
from aiperf.config.dataset.content import PromptConfig
from aiperf.dataset.generator.coding_content import CodingContentGenerator
rng.init(42)
tok = Tokenizer.from_pretrained(sys.argv[1])
gen = CodingContentGenerator(config=PromptConfig(), tokenizer=tok)
unk = sum(1 for t in gen._tool_pool if t == 0)
blocks = [tok.decode(gen._build_token_sequence(64, [h], 64)) for h in range(1, 41)]
counts = sorted({len(b.split()) for b in blocks})
print(json.dumps({"pool": len(gen._tool_pool), "unk": unk, "counts": counts,
                  "distinct": len(set(blocks))}))
"""


def test_the_word_tokenizer_loads_offline_and_counts_words(tmp_path):
    python = client_python()
    words = client_corpus_words(python, [42])
    src = write_word_tokenizer(tmp_path / "words", words)
    name = layout_tokenizer(src, tmp_path / "hf", "local/words")
    got = run_client(TOKENIZER_SCRIPT, name,
                     env={"HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "1"})
    assert got["pool"] > 50_000 and got["unk"] == 0
    assert got["counts"] == [64]  # a 64-token block is 64 whitespace words
    assert got["distinct"] == 40  # every hash id its own text
