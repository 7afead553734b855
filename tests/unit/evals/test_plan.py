from __future__ import annotations

import pytest

from infersweep.diagnostics import InputError
from infersweep.evals import plan

SHA = "ab" * 32


def summary(**over) -> dict:
    data = {"eval-version": 2, "limit": 66,
            **plan.record(1319, 66, SHA, "/data/gsm8k/test.jsonl", "cd" * 32)}
    data.update(over)
    return data


def test_the_recorded_plan_gives_the_first_limit_doc_ids():
    p = plan.from_summary(summary(), "ev/eval.json")
    assert p.doc_ids(1319) == range(0, 66) and p.questions == 66
    assert p.describe(1319) == "the first 66 of 1,319 questions (--limit 66)"
    assert (p.dataset_sha256, p.test_file) == (SHA, "/data/gsm8k/test.jsonl")


def test_a_limit_beyond_the_split_and_no_limit_ask_every_question():
    whole = plan.from_summary(summary(**plan.record(200, None, SHA, None, SHA)), "e")
    assert whole.doc_ids(200) == range(200) and whole.describe(200) == "all 200 questions"
    assert plan.record(200, 1319, SHA, None, SHA)["plan"]["questions"] == 200
    assert plan.record(200, None, SHA, None, SHA)["dataset"]["source"] == "hub"


@pytest.mark.parametrize(("change", "said"), [
    ({"eval-version": 1}, "eval-version 1 records no question plan"),
    ({"plan": None}, "no 'plan' and 'dataset' records"),
    ({"plan": {"selection": "random", "offset": 0, "limit": 3, "questions": 3}},
     "plan selection 'random'"),
    ({"plan": {"selection": "first", "offset": 0, "limit": 0, "questions": 3}},
     "'limit' (null or a count)"),
    ({"plan": {"selection": "first", "offset": 0, "limit": True, "questions": 3}},
     "'limit' (null or a count)"),
    ({"dataset": {"rows": 10, "sha256": "xyz"}}, "'dataset' needs 'rows'"),
    ({"targets-sha256": None}, "'targets-sha256' is missing"),
])
def test_a_missing_or_broken_plan_is_an_eval_plan_error(change, said):
    with pytest.raises(InputError) as exc:
        plan.from_summary(summary(**change), "ev/eval.json")
    text = str(exc.value)
    assert text.startswith("ev/eval.json:1:1: [eval-plan] ") and said in text, text
    assert "run `eval gsm8k` again" in text
