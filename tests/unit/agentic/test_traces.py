"""Reading and checking Weka trace corpora: the client's schema, sense, located errors."""

from __future__ import annotations

import copy

import orjson
import pytest

from infersweep.agentic.traces import check_corpus, corpus_files, load_corpus
from infersweep.diagnostics import InputError


def call(t=0.0, n_in=128, out=16, ids=(1, 2), **extra):
    return {"t": t, "type": "n", "model": "m", "in": n_in, "out": out,
            "hash_ids": list(ids), **extra}


def trace(tid="a", requests=None, **extra):
    return {"id": tid, "models": ["m"], "block_size": 64, "hash_id_scope": "local",
            "requests": requests if requests is not None else [call()], **extra}


def subagent(t=1.0, requests=None, agent_id="agent_001"):
    return {"t": t, "type": "subagent", "agent_id": agent_id, "subagent_type": "Explore",
            "status": "completed", "requests": requests or [call(t, ids=(1, 9))],
            "models": ["m"]}


def write(tmp_path, *traces, indent=True):
    d = tmp_path / "corpus"
    d.mkdir(exist_ok=True)
    for i, t in enumerate(traces):
        opt = orjson.OPT_INDENT_2 if indent else 0
        (d / f"t{i}.json").write_bytes(orjson.dumps(t, option=opt))
    return d


def only(diags):
    assert len(diags) == 1, [str(d) for d in diags]
    return diags[0]


def test_a_valid_corpus_loads(tmp_path):
    d = write(tmp_path, trace("a"), trace("b", [call(), subagent(), call(2.0)]))
    corpus = load_corpus(d)
    assert [t.id for t in corpus.traces] == ["a", "b"]
    assert check_corpus(d) == []


def test_jsonl_is_one_trace_per_line_and_errors_name_the_line(tmp_path):
    bad = trace("b")
    bad["requests"][0]["in"] = "128"
    f = tmp_path / "traces.jsonl"
    f.write_bytes(b"\n".join(orjson.dumps(t) for t in (trace("a"), bad, trace("c"))) + b"\n")
    d = only(check_corpus(f))
    assert (d.path, d.line) == (str(f), 2)
    line = f.read_text().splitlines()[1]
    assert line[d.col - 1:].startswith('"128"')
    assert "'in' must be an integer" in d.message


def test_a_dataset_snapshot_directory_reads_its_jsonl(tmp_path):
    (tmp_path / "traces.jsonl").write_bytes(orjson.dumps(trace("a")) + b"\n")
    assert corpus_files(tmp_path) == ([tmp_path / "traces.jsonl"], True)
    assert len(load_corpus(tmp_path).traces) == 1


def test_unknown_key_is_refused_at_the_key(tmp_path):
    t = trace()
    t["requests"][0]["ttft"] = 0.1  # only streaming ("s") calls have a ttft
    d = only(check_corpus(write(tmp_path, t)))
    text = (tmp_path / "corpus" / "t0.json").read_text().splitlines()
    assert text[d.line - 1][d.col - 1:].startswith('"ttft"')
    assert d.message == "unknown key 'ttft' in request 0"
    assert "refuses unknown keys" in d.hint


def test_misspelt_key_gets_a_suggestion(tmp_path):
    t = trace()
    t["requests"][0]["think_tim"] = 1.0
    assert "did you mean 'think_time'" in only(check_corpus(write(tmp_path, t))).hint


@pytest.mark.parametrize("mutate, message", [
    (lambda t: t.update(hash_id_scope="global"), "'hash_id_scope' must be \"local\""),
    (lambda t: t.pop("models"), "a trace has no 'models'"),
    (lambda t: t.update(block_size=0), "'block_size' must be a positive integer"),
    (lambda t: t["requests"][0].update(type="x"), "request 0 has type the string 'x'"),
    (lambda t: t["requests"][0].update(t="1.5"), "'t' must be a number"),
    (lambda t: t["requests"][0].update(hash_ids=[1, 2.5]), "'hash_ids'[1] is 2.5"),
    (lambda t: t["requests"][0].update(out=True), "'out' must be an integer, not true"),
    (lambda t: t["requests"][0].update(stop=None), "'stop' must be a string, not null"),
    (lambda t: t["requests"][0].update(**{"in": 0}), "'in' is 0"),
    (lambda t: t["requests"].extend([call(t=5.0), call(t=1.0)]), "'t' goes back in time"),
    (lambda t: t["requests"][0].update(api_time=-0.5), "'api_time' is -0.5"),
    (lambda t: t["requests"].append(subagent(requests=[subagent()])),
     "request 0 of subagent 1 has type the string 'subagent'"),
    (lambda t: t["requests"].extend([subagent(), subagent()]),
     "agent_id 'agent_001' is also subagent 1's"),
    (lambda t: t.update(requests=[]), "the trace has no requests"),
])
def test_each_problem_is_named(tmp_path, mutate, message):
    t = trace()
    mutate(t)
    d = only(check_corpus(write(tmp_path, t)))
    assert message in d.message
    assert d.line >= 1 and d.col >= 1


def test_every_problem_of_every_file_is_listed(tmp_path):
    a, b = trace("a"), trace("b")
    a["requests"][0]["in"] = None
    b["extra"] = 1
    b["requests"][0]["model"] = 5
    diags = check_corpus(write(tmp_path, a, b))
    assert [(d.path.rsplit("/", 1)[-1], d.message.split(" ")[0]) for d in diags] == [
        ("t0.json", "'in'"), ("t1.json", "unknown"), ("t1.json", "'model'")]
    with pytest.raises(InputError) as exc:
        load_corpus(tmp_path / "corpus")
    assert len(exc.value.diagnostics) == 3


def test_a_subagent_time_relative_to_its_spawn_is_in_order(tmp_path):
    t = trace(requests=[call(t=10.0), subagent(t=11.0, requests=[call(0.5), call(1.0)])])
    assert check_corpus(write(tmp_path, t)) == []


def test_out_zero_is_a_warning_not_an_error(tmp_path):
    corpus = load_corpus(write(tmp_path, trace(requests=[call(out=0)])))
    assert [w.rule for w in corpus.warnings] == ["trace-out-zero"]


def test_duplicate_trace_ids_are_refused_at_the_second(tmp_path):
    d = only(check_corpus(write(tmp_path, trace("same"), trace("same"))))
    assert d.path.endswith("t1.json") and "also the id of the trace at" in d.message


def test_syntax_errors_are_located(tmp_path):
    d = tmp_path / "corpus"
    d.mkdir()
    (d / "x.json").write_text('{"id": "a",\n  "models": [1,]\n}')
    diag = only(check_corpus(d))
    assert (diag.line, diag.rule) == (2, "trace-json")


def test_not_a_corpus(tmp_path):
    assert "no *.json or *.jsonl" in only(check_corpus(tmp_path)).message
    assert "no such file" in only(check_corpus(tmp_path / "missing")).message


def test_the_input_is_not_changed_by_checking(tmp_path):
    t = trace(requests=[call(), subagent()])
    before = copy.deepcopy(t)
    load_corpus(write(tmp_path, t))
    assert t == before
