"""Planning a sweep's job list within GitHub's limits (shards.plan), and the layout rules that
judge only appended lines (gate.check_layout), without git."""

from __future__ import annotations

import json

import pytest

from infersweep.changelog import gate, shards
from infersweep.diagnostics import InputError


def _rows(n: int, multi: bool = False) -> list[dict]:
    extra = {"prefill": {"num-worker": 1}, "decode": {"num-worker": 1}, "conc": [4, 8]} if multi \
        else {"tp": 8, "conc": 4}
    return [{"exp-name": f"r{i}", "framework": "vllm", "runner": f"node_{i % 3}", **extra}
            for i in range(n)]


@pytest.mark.parametrize("sizes", [
    {},
    {"single-node": 1},
    {"single-node": 256, "evals": 257},
    {"single-node": 700, "single-node-agentic": 480, "evals": 200, "agentic-evals": 33},
    {"multi-node": 512, "multinode-evals": 1},
])
def test_plan_shards_every_row_once(sizes):
    job_rows = {name: _rows(n, multi=name.startswith("multi")) for name, n in sizes.items()}
    plan = shards.plan(job_rows)
    outputs = {k: json.loads(v) for k, v in plan.outputs.items()}
    assert set(outputs) == set(shards.output_names())
    entries = [e for v in outputs.values() for e in v]
    assert all(len(v) <= shards.MATRIX_LIMIT for v in outputs.values())
    assert len({e["id"] for e in entries}) == len(entries) == sum(sizes.values())
    assert sorted(plan.rows) == sorted(e["id"] for e in entries)
    for name, n in sizes.items():
        assert plan.counts[name] == (n, -(-n // shards.MATRIX_LIMIT))
        assert [plan.rows[f"{name}-{i + 1}"] for i in range(n)] == job_rows[name]
    for value in outputs.values():  # one bucket per shard
        assert len({e["id"].rsplit("-", 1)[0] for e in value}) <= 1


def test_plan_refuses_more_shards_than_slots():
    too_many = shards.SLOTS["multi"] * shards.MATRIX_LIMIT + 1
    with pytest.raises(InputError) as err:
        shards.plan({"multi-node": _rows(too_many, multi=True)})
    assert "needs 11 multi-node shards" in str(err.value)
    assert "run-sweep.yml has 10 multi-node shard jobs" in str(err.value)


def test_plan_refuses_outputs_over_one_megabyte():
    rows = _rows(2000)
    for row in rows:
        row["exp-name"] = "x" * 300  # long titles: fits the shards, not the output budget
    with pytest.raises(InputError) as err:
        shards.plan({"single-node": rows})
    assert "MB of setup-job outputs; GitHub keeps at most 1 MB per job" in str(err.value)


def test_titles_say_what_runs():
    single, multi = _rows(1)[0], _rows(1, multi=True)[0]
    assert shards.title(single) == "r0 vllm tp8 c4"
    assert shards.title(multi) == "r0 vllm 1P1D c4-8"
    assert shards.title(dict(single, **{"run-eval": True})).endswith(" eval")


ENTRY = "- config-keys:\n    - k\n  description:\n    - \"x\"\n  pr-link: XXX\n"


@pytest.mark.parametrize("base_end", ["", "\n", "  \n", "\n\n", "  \n\n", "\n  \n", " \n"])
@pytest.mark.parametrize("separator", ["", "\n"])
def test_an_append_after_any_base_ending(base_end, separator):
    """Old lines never count against the new ones: after a base ending in any separator,
    one empty line or none opens a compliant append; after an entry, exactly one."""
    base = ENTRY + base_end
    head = base + separator + ENTRY
    start = len(base.splitlines())
    diags = gate.check_layout("perf-changelog.yaml", base, head, start)
    compliant = bool(separator) or base_end != ""
    assert (diags == []) == compliant, diags
    if not compliant:
        assert [d.rule for d in diags] == ["changelog-separator"]


def test_two_appended_empty_lines_are_refused_even_after_a_blank_base():
    base = ENTRY + "\n"
    diags = gate.check_layout("perf-changelog.yaml", base, base + "\n\n" + ENTRY,
                              len(base.splitlines()))
    assert [d.message for d in diags] == ["more than one empty line"]
