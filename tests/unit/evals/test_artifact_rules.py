"""`eval check` judges by rules and data pinned in the checkout, never by what the eval
brings: the scoring rules are the task's (an eval recording others is refused, and no pattern
it records is compiled), and the test split must be one the thresholds file pins. Each
forgery is made consistent (extractions, verdicts, scores, counts and digests recomputed)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from infersweep.evals import check, dataset, rules, testset, thresholds
from tests.conftest import SHARED, shared_absent
from tests.unit.evals import evalfolder

N = 20  # questions of the built-in split each eval here asked


@pytest.fixture
def builtin() -> Path:
    return dataset.builtin_test_file()


@pytest.fixture
def limits(tmp_path) -> Path:
    return evalfolder.thresholds(tmp_path / "thresholds.yaml")


def _judge(folder: Path, limits: Path, **kw) -> check.EvalReport:
    return check.check_folder(folder, thresholds.load(str(limits)), None,
                              scope=check.Scope.LOCAL, **kw)


def _rules_of(report: check.EvalReport) -> list[str]:
    return [d.rule for d in report.diagnostics]


def test_an_honest_eval_on_a_pinned_split_passes(tmp_path, builtin, limits):
    evalfolder.write(tmp_path / "ev", builtin, n=N)
    rep = _judge(tmp_path / "ev", limits)
    assert rep.passed, rep.problems
    assert rep.rescored == {"strict-match": 1.0, "flexible-extract": 1.0}


def test_an_ignore_everything_metric_brought_by_the_eval_is_refused(tmp_path, builtin, limits,
                                                                     run_cli):
    """Every answer "no idea", and the metric told to ignore everything: scored by its own
    rules, every verdict, both scores (1.0) and the counts agree."""
    forged = dict(rules.METRIC, regexes_to_ignore=[*rules.METRIC["regexes_to_ignore"],
                                                     "(?s).*"])
    summary = evalfolder.write(tmp_path / "ev", builtin, n=N, respond=lambda t: "no idea",
                               metric=forged)
    assert {f: s["exact_match"] for f, s in summary["scores"].items()} == {
        "strict-match": 1.0, "flexible-extract": 1.0}
    rep = _judge(tmp_path / "ev", limits)
    assert not rep.passed
    assert rep.rescored == {"strict-match": 0.0, "flexible-extract": 0.0}
    assert {"eval-rules", "eval-rescore", "eval-score-mismatch",
            "eval-below-threshold"} <= set(_rules_of(rep))
    code, out, err = run_cli("eval", "check", tmp_path / "ev", "--thresholds", limits,
                             "--scope", "local")
    line = next(i for i, x in enumerate((tmp_path / "ev" / "eval.json").read_text()
                                        .splitlines(), 1) if '"metric"' in x)
    assert code == 1
    assert f"ev/eval.json:{line}:1: [eval-rules] metric is " in out, out
    assert "'(?s).*'" in out and "other scoring rules than the GSM8K task" in out
    assert "infersweep/evals/rules.py" in out


def test_a_filter_brought_by_the_eval_is_refused(tmp_path, builtin, limits):
    """A strict-match filter that takes any number (so a wrong chain of thought whose first
    number is right passes), with everything re-scored by it."""
    loose = dict(evalfolder.FILTERS, **{"strict-match": {
        "regex": r"(\d+)", "group_select": -1, "fallback": "[invalid]"}})
    evalfolder.write(tmp_path / "ev", builtin, n=N, filters=loose,
                     respond=lambda t: f"I think {t.rsplit('#### ', 1)[1]}")
    rep = _judge(tmp_path / "ev", limits)
    assert "eval-rules" in _rules_of(rep)
    assert any("filters.strict-match is {'regex': '(\\\\d+)'" in p for p in rep.problems), \
        rep.problems


def _with_filter_regex(folder: Path, regex: str, response: str) -> None:
    summary = json.loads((folder / "eval.json").read_text())
    summary["filters"]["strict-match"]["regex"] = regex
    (folder / "eval.json").write_text(json.dumps(summary, indent=2))
    lines = [json.loads(x) for x in (folder / "samples.jsonl").read_text().splitlines()]
    lines[0]["response"] = response
    (folder / "samples.jsonl").write_text("".join(json.dumps(s) + "\n" for s in lines))


def test_a_catastrophic_pattern_in_the_eval_is_never_run(tmp_path, builtin, limits):
    """``^(a+)+$`` against 32 a's and a '!' takes minutes to fail in Python's re."""
    evalfolder.write(tmp_path / "ev", builtin, n=N)
    _with_filter_regex(tmp_path / "ev", "^(a+)+$", "a" * 32 + "!")
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, "-m", "infersweep", "eval", "check", tmp_path / "ev",
                        "--thresholds", limits, "--scope", "local"],
                       capture_output=True, text=True, timeout=60)
    assert time.monotonic() - t0 < 30
    assert p.returncode == 1
    assert "[eval-rules] filters.strict-match is {'regex': '^(a+)+$'" in p.stdout, p.stdout
    assert "Traceback" not in p.stderr


def test_an_invalid_pattern_in_the_eval_is_a_refusal_not_a_traceback(tmp_path, builtin, limits,
                                                                     run_cli):
    evalfolder.write(tmp_path / "ev", builtin, n=N)
    _with_filter_regex(tmp_path / "ev", "([", "#### 3")
    code, out, err = run_cli("eval", "check", tmp_path / "ev", "--thresholds", limits,
                             "--scope", "local")
    assert code == 1
    assert "[eval-rules] filters.strict-match is {'regex': '(['" in out, out
    assert "Traceback" not in err and "re.error" not in err


def _forged_split(builtin: Path, where: Path) -> Path:
    """The built-in split with every answer one more: a copy outside the eval's folder."""
    rows = testset.read_rows(builtin, "split")
    where.parent.mkdir(parents=True, exist_ok=True)
    where.write_text("".join(json.dumps({"question": q, "answer": _plus_one(a)}) + "\n"
                             for q, a in rows))
    return where


def _plus_one(answer: str) -> str:
    head, n = answer.rsplit("#### ", 1)
    return f"{head}#### {int(n.replace(',', '')) + 1}"


@pytest.mark.parametrize("given", [False, True])
def test_a_forged_split_with_its_digests_recomputed_is_refused(tmp_path, builtin, limits,
                                                               given):
    """The model answers wrongly (one more each time); the forged split agrees with it and
    the eval records the forged split's file, digest and targets' digest. Judged against the
    split it recorded, or the one the forger names with --dataset, it is consistent."""
    fake = _forged_split(builtin, tmp_path / "elsewhere" / "test.jsonl")
    evalfolder.write(tmp_path / "ev", fake, n=N)
    rep = _judge(tmp_path / "ev", limits, dataset=fake if given else None)
    assert rep.rescored == {"strict-match": 1.0, "flexible-extract": 1.0}
    assert _rules_of(rep) == ["eval-dataset-unpinned"], rep.problems
    assert (f"[eval-dataset-unpinned] the test split {fake} (200 rows, sha256 "
            f"{testset.digest_rows(testset.read_rows(fake, 's'))}) is none of the splits the "
            "thresholds file pins (openai/gsm8k (main), test split: 1,319 rows") \
        in rep.problems[0], rep.problems
    assert "give the real GSM8K test split with --dataset FILE" in rep.problems[0]


def test_a_thresholds_file_that_pins_no_split_accepts_none(tmp_path, builtin):
    evalfolder.write(tmp_path / "ev", builtin, n=N)
    bare = tmp_path / "t.yaml"
    bare.write_text("default:\n  gsm8k: 0.5\n")
    rep = _judge(tmp_path / "ev", bare)
    assert _rules_of(rep) == ["eval-dataset-unpinned"]
    assert "(it pins none)" in rep.problems[0]


def _pins() -> dict[int, str]:
    limits = thresholds.load(str(Path(__file__).resolve().parents[3] / "configs"
                                 / "eval-thresholds.yaml"))
    return {p.rows: p.sha256 for p in thresholds.pinned_splits(limits)}


def test_the_built_in_split_is_pinned_as_this_code_writes_it(builtin):
    assert _pins()[200] == testset.digest_rows(testset.read_rows(builtin, "built-in"))


def test_the_gsm8k_test_split_is_pinned():
    test = SHARED / "data" / "gsm8k" / "test.jsonl"
    if not test.is_file():
        shared_absent(f"the GSM8K test split is not at {test}")
    assert _pins()[1319] == testset.digest_rows(testset.read_rows(test, "gsm8k"))
