"""The sweep's one-line staging verdict."""

from __future__ import annotations

from infersweep.results.check import MISSING, SHORT, Problem
from infersweep.sweep.gate import NO_EVAL, Verdict

COUNTS = {"expected": 11, "complete": 11, "rows": 11, "problems": 0}


class Report:  # what the verdict reads of an eval report
    problems: list[str] = []


def test_stageable_without_evals():
    assert Verdict([], COUNTS).line() == "stageable: yes — 11/11 points, no evals asked for"


def test_stageable_with_evals():
    v = Verdict([], COUNTS, evals=[Report(), Report()])
    assert v.stageable and v.line() == "stageable: yes — 11/11 points, evals pass (2)"


def test_a_missing_point_and_a_low_eval_are_both_named():
    v = Verdict([Problem(MISSING, "k r c=64", "no row")], {**COUNTS, "complete": 10},
                evals=[Report()],
                eval_problems=["e/eval.json: strict-match 0.8 is below the threshold 0.91 (x)"])
    assert not v.stageable
    assert v.line() == "stageable: no — 1 point missing (c=64), eval below threshold"


def test_several_short_points_and_an_absent_eval():
    v = Verdict([Problem(SHORT, "k r c=4", "3 of 4"), Problem(SHORT, "k r c=8", "7 of 8")],
                {**COUNTS, "complete": 9}, eval_problems=[f"x/eval: {NO_EVAL}"])
    assert v.line() == "stageable: no — 2 points short (c=4, c=8), 1 eval missing"


def test_only_an_eval_problem_still_shows_the_points():
    v = Verdict([], COUNTS, evals=[Report()], eval_problems=["s.jsonl:3: doc 2: empty response"])
    assert v.line() == "stageable: no — 11/11 points, 1 eval problem"
