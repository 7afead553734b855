"""Re-scoring saved samples without lm-eval: its regex filter and exact-match metric, with
the pinned rules of :mod:`infersweep.evals.rules` (never the rules an eval recorded).
``eval check`` uses it to prove the scores."""

from __future__ import annotations

import re
import string

from infersweep.evals import rules

FILTERS = tuple(rules.FILTERS)
_TARGET_ANSWER = re.compile(r"#### (\-?[0-9\.\,]+)")  # the answer a GSM8K target ends with
_PUNCTUATION = str.maketrans("", "", string.punctuation)


def _first(pattern: re.Pattern, group_select: int, fallback: str, text: object) -> str:
    found = pattern.findall(text if isinstance(text, str) else "")
    if not found:
        return fallback
    m = found[group_select]
    if isinstance(m, tuple):
        parts = [x for x in m if x]
        m = parts[0] if parts else fallback
    return m.strip()


def extract(filter_name: str, text: object) -> str:
    """The answer the task's filter ``filter_name`` takes from a response."""
    rule = rules.FILTERS[filter_name]
    return _first(rules.COMPILED_FILTERS[filter_name], rule.group_select, rule.fallback, text)


def target_answer(target: str) -> str:
    """The number a GSM8K target ends with (``#### N``), or ``""``."""
    return _first(_TARGET_ANSWER, 0, "", target)


def normalise(text: str) -> str:
    for rx in rules.COMPILED_IGNORED:
        text = rx.sub("", text)
    if rules.METRIC["ignore_case"]:
        text = text.lower()
    if rules.METRIC["ignore_punctuation"]:
        text = text.translate(_PUNCTUATION)
    return text


def exact_match(pred: str, target: str) -> float:
    return 1.0 if normalise(pred) == normalise(target) else 0.0


def filter_spec(config_filter: dict) -> dict:
    """``{"regex", "group_select", "fallback"}`` from one lm-eval ``filter_list`` entry (what
    a run records of the task it ran)."""
    steps = config_filter.get("filter") or []
    rx = next((s for s in steps if isinstance(s, dict) and s.get("function") == "regex"), None)
    if rx is None or not isinstance(rx.get("regex_pattern"), str):
        raise ValueError(f"filter {config_filter.get('name')!r} has no regex step")
    return {"regex": rx["regex_pattern"], "group_select": int(rx.get("group_select", 0)),
            "fallback": rx.get("fallback", rules.FALLBACK)}
