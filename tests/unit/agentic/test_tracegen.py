"""The seeded synthetic corpus: deterministic, valid, shaped like a coding agent's."""

from __future__ import annotations

import os

import pytest

from infersweep.agentic.tracegen import GenParams, generate_trace, parse_range, write_corpus
from infersweep.agentic.traces import load_corpus
from infersweep.agentic.tracestats import corpus_stats
from infersweep.diagnostics import InputError


def files(d):
    return {p.name: p.read_bytes() for p in sorted(d.iterdir())}


def test_same_seed_same_bytes_other_seed_other_bytes(tmp_path):
    write_corpus(GenParams(seed=3), tmp_path / "a")
    write_corpus(GenParams(seed=3), tmp_path / "b")
    write_corpus(GenParams(seed=4), tmp_path / "c")
    assert files(tmp_path / "a") == files(tmp_path / "b")
    assert files(tmp_path / "a") != files(tmp_path / "c")
    assert len(files(tmp_path / "a")) == 8


def test_the_corpus_passes_every_check(tmp_path):
    write_corpus(GenParams(traces=20, subagents=0.5), tmp_path / "c")
    corpus = load_corpus(tmp_path / "c")
    assert corpus.warnings == []
    s = corpus_stats(corpus)
    assert s.subagents > 0 and 6 * 20 <= s.turns <= 12 * 20
    assert 0.5 < s.hit_rate < 1.0


def main_calls(t):
    return [r for r in t["requests"] if r["type"] != "subagent"]


def test_each_turn_extends_the_last_or_compacts_to_the_prefix():
    p = GenParams(traces=1, turns=(30, 30), max_context=8192)
    t = generate_trace(p, 0)
    calls = main_calls(t)
    prefix = calls[0]["hash_ids"][:p.system_tokens // p.block_size]
    compactions = 0
    for prev, cur in zip(calls, calls[1:], strict=False):
        if cur["hash_ids"][:len(prev["hash_ids"])] == prev["hash_ids"]:
            answer = -(-prev["out"] // p.block_size)
            assert len(cur["hash_ids"]) > len(prev["hash_ids"]) + answer
        else:
            compactions += 1
            assert cur["hash_ids"][:len(prefix)] == prefix
            assert not set(cur["hash_ids"][len(prefix):]) & set(prev["hash_ids"])
        assert cur["in"] == len(cur["hash_ids"]) * p.block_size <= p.max_context
    assert compactions > 0


def test_times_follow_the_replay_rule():
    t = generate_trace(GenParams(traces=1, turns=(12, 12), subagents=0.5), 0)
    reqs = t["requests"]
    for i, r in enumerate(reqs[1:], 1):
        prev = reqs[i - 1]
        if r["type"] == "subagent":
            assert r["t"] >= prev["t"] + prev["api_time"] - 1e-9
            inner = r["requests"]
            assert inner[0]["t"] == r["t"]
            last = inner[-1]
            assert r["duration_ms"] == round((last["t"] + last["api_time"] - r["t"]) * 1000)
            continue
        if prev["type"] == "subagent":  # the parent waits for the subagent to end
            last, parent = prev["requests"][-1], reqs[i - 2]
            ended = max(last["t"] + last["api_time"], parent["t"] + parent["api_time"])
            assert ended == last["t"] + last["api_time"]
            assert r["t"] == pytest.approx(ended + r["think_time"], abs=2e-3)
        else:
            assert r["t"] == pytest.approx(prev["t"] + prev["api_time"] + r["think_time"],
                                           abs=2e-3)


def test_subagents_share_the_prefix_then_diverge():
    p = GenParams(traces=1, turns=(12, 12), subagents=1.0)
    t = generate_trace(p, 0)
    n_prefix = p.system_tokens // p.block_size
    parent = main_calls(t)
    subs = [r for r in t["requests"] if r["type"] == "subagent"]
    assert subs
    for s in subs:
        first = s["requests"][0]["hash_ids"]
        assert first[:n_prefix] == parent[0]["hash_ids"][:n_prefix]
        assert not set(first[n_prefix:]) & {h for c in parent for h in c["hash_ids"]}


def test_every_knob_is_honoured():
    p = GenParams(traces=1, turns=(3, 3), block_size=16, first_context=(400, 400),
                  system_tokens=64, output_tokens=(5, 5), subagents=0.0, model="x")
    t = generate_trace(p, 0)
    calls = t["requests"]
    assert len(calls) == 3 and t["block_size"] == 16 and t["models"] == ["x"]
    assert calls[0]["in"] == 400 and all(c["out"] == 5 for c in calls)


def test_an_existing_directory_is_kept_unless_forced(tmp_path):
    out = tmp_path / "c"
    write_corpus(GenParams(traces=2), out)
    with pytest.raises(InputError, match="already exists"):
        write_corpus(GenParams(traces=3), out)
    assert len(os.listdir(out)) == 2
    write_corpus(GenParams(traces=3), out, force=True)
    assert sorted(os.listdir(out)) == ["trace-0000.json", "trace-0001.json", "trace-0002.json"]
    assert sorted(os.listdir(tmp_path)) == ["c"]  # no temporary directory left behind


def test_bad_options_are_refused_before_writing(tmp_path):
    with pytest.raises(InputError) as exc:
        write_corpus(GenParams(first_context=(100, 200), system_tokens=512,
                               output_tokens=(0, 5)), tmp_path / "c")
    assert len(exc.value.diagnostics) == 2
    assert not (tmp_path / "c").exists()


@pytest.mark.parametrize("text, integer, expected", [
    ("5", True, (5, 5)), ("2-9", True, (2, 9)), ("0.5-1.5", False, (0.5, 1.5))])
def test_parse_range(text, integer, expected):
    assert parse_range(text, integer=integer) == expected


@pytest.mark.parametrize("text", ["9-2", "x", "1-2-3", "1.5"])
def test_parse_range_refuses(text):
    with pytest.raises(ValueError):
        parse_range(text)
