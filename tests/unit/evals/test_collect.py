from __future__ import annotations

import json

from infersweep.evals import collect


def _eval(folder, key, attempt, run="r1", score=0.95, fp="f" * 64):
    folder.mkdir(parents=True)
    (folder / "eval.json").write_text(json.dumps({
        "eval-version": 1, "task": "gsm8k", "model": "m", "n-samples": 10, "concurrency": 128,
        "scores": {"strict-match": {"exact_match": score, "stderr": 0.01},
                   "flexible-extract": {"exact_match": score, "stderr": 0.01}},
        "filters": {"strict-match": {"regex": "x", "group_select": 0, "fallback": "[invalid]"},
                    "flexible-extract": {"regex": "y", "group_select": -1,
                                         "fallback": "[invalid]"}},
        "metric": {}, "requests": {"failed": 0, "retries": 2, "retry-time-s": 3.5},
        "provenance": {"config-key": key, "recipe-fingerprint": fp, "image": "img:1",
                       "parallelism": {"prefill": {"tp": 8}, "decode": {"tp": 8}},
                       "run-id": run, "attempt": attempt}}))


def test_rows_are_ordered_and_the_newest_attempt_wins(tmp_path):
    _eval(tmp_path / "z-first", "b-key", 1)
    _eval(tmp_path / "a-retry", "b-key", 2, score=0.96)
    _eval(tmp_path / "m", "a-key", 1)
    agg = collect.collect([str(tmp_path)])
    rows = agg["evals"]
    assert [r["config-key"] for r in rows] == ["a-key", "b-key"]
    b = rows[1]
    assert b["attempt"] == 2 and b["em-strict"] == 0.96
    assert b["replaced"] == [str(tmp_path / "z-first")]
    assert b["recipe-fingerprint"] == "f" * 64 and b["image"] == "img:1"
    assert b["parallelism"] == {"prefill": {"tp": 8}, "decode": {"tp": 8}}
    assert b["run-id"] == "r1" and b["retries"] == 2 and b["conc"] == 128
