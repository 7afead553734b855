from __future__ import annotations

from infersweep.evals.findings import SHOWN, Findings


def test_a_rule_firing_often_lists_its_first_places_then_how_many_more():
    f = Findings()
    for line in range(1, SHOWN + 6):
        f.refuse("ev/samples.jsonl", line, "eval-rescore", f"doc {line - 1}: differs", "re-run")
    f.refuse("ev/eval.json", 1, "eval-score-mismatch", "score differs")
    done = f.done()
    assert [d.line for d in done if d.rule == "eval-rescore"] == [*range(1, SHOWN + 1), 0]
    assert str(done[-1]) == "ev/samples.jsonl: [eval-rescore] 5 more like the above (re-run)"
    assert str(done[SHOWN]) == "ev/eval.json:1:1: [eval-score-mismatch] score differs"
