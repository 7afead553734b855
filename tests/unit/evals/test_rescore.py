"""The check's re-scoring agrees with lm-eval's own regex filter and exact-match metric, and
the rules it pins (infersweep/evals/rules.py) are the installed gsm8k task's."""

from __future__ import annotations

from importlib.metadata import version

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from lm_eval.api.metrics import exact_match_hf_evaluate
from lm_eval.filters.extraction import RegexFilter

from infersweep.evals import rescore, rules, task

RESPONSES = [
    "The result is 133.\n#### 133", "#### 1,234", "#### -7", "no number at all", "",
    "$18 then $20.50 and finally 42.", "#### 12.\nQuestion: next", "Answer: 5 apples, 6 pears",
    "#### $1,000", "x #### 3 #### 4", "-.5 and 0.75", "12,345,678",
]
TARGETS = ["#### 133", "a\n#### 1,234", "#### -7", "#### 42", "#### 5", "#### 1000", "#### 3"]


def _task_config():
    return yaml.safe_load(task.builtin_yaml().read_text())


def test_filters_of_the_installed_task_are_the_two_gsm8k_filters():
    names = [f["name"] for f in _task_config()["filter_list"]]
    assert names == list(rescore.FILTERS)


def test_the_pinned_rules_are_the_installed_tasks():
    cfg = _task_config()
    assert {f["name"]: rescore.filter_spec(f) for f in cfg["filter_list"]} == {
        name: rule.recorded() for name, rule in rules.FILTERS.items()}
    metric = next(m for m in cfg["metric_list"] if m["metric"] == "exact_match")
    assert {k: metric[k] for k in rules.METRIC} == rules.METRIC
    assert cfg["metadata"]["version"] == rules.TASK_VERSION
    assert version("lm-eval") == rules.LM_EVAL_VERSION


def test_recorded_rules_are_compared_as_data():
    same = {name: rule.recorded() for name, rule in rules.FILTERS.items()}
    assert rules.differences(same, dict(rules.METRIC)) == []
    other = dict(same, extra={"regex": "x", "group_select": 0, "fallback": ""})
    assert rules.differences(other, rules.METRIC) == [
        "filters has extra, which the task does not define"]
    assert rules.differences("not a dict", None)[0].startswith("filters.strict-match is None")


def _ours_and_theirs(response: str):
    cfg = _task_config()
    out = []
    for f in cfg["filter_list"]:
        spec = rescore.filter_spec(f)
        theirs = RegexFilter(regex_pattern=spec["regex"], group_select=spec["group_select"])
        out.append((rescore.extract(f["name"], response),
                    theirs.apply([[response]], [{}])[0][0]))
    return out


def test_extraction_matches_lm_eval_on_known_responses():
    for r in RESPONSES:
        for ours, theirs in _ours_and_theirs(r):
            assert ours == theirs, r


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="0123456789$.,-# \nabc", max_size=40))
def test_extraction_matches_lm_eval_on_any_text(response):
    for ours, theirs in _ours_and_theirs(response):
        assert ours == theirs


def test_exact_match_matches_lm_eval():
    metric = next(m for m in _task_config()["metric_list"] if m["metric"] == "exact_match")
    kw = {k: metric[k] for k in ("ignore_case", "ignore_punctuation", "regexes_to_ignore")}
    for r in RESPONSES:
        for t in TARGETS:
            for pred, _ in _ours_and_theirs(r):
                theirs = exact_match_hf_evaluate([pred], [t], **kw)["exact_match"]
                assert rescore.exact_match(pred, t) == theirs, (pred, t)
