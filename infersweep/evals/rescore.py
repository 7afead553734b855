"""Re-scoring saved samples without lm-eval: its regex filter and exact-match metric, as
documented by the task config saved with the run (filter pattern, group, fallback; the
metric's case folding and ignored regexes). ``eval check`` uses it to prove the scores."""

from __future__ import annotations

import re
import string

FILTERS = ("strict-match", "flexible-extract")


def extract(pattern: str, group_select: int, fallback: str, text: str) -> str:
    found = re.findall(pattern, text if isinstance(text, str) else "")
    if not found:
        return fallback
    m = found[group_select]
    if isinstance(m, tuple):
        parts = [x for x in m if x]
        m = parts[0] if parts else fallback
    return m.strip()


def normalise(text: str, metric: dict) -> str:
    for rx in metric.get("regexes_to_ignore") or []:
        text = re.sub(rx, "", text)
    if metric.get("ignore_case"):
        text = text.lower()
    if metric.get("ignore_punctuation"):
        text = text.translate(str.maketrans("", "", string.punctuation))
    return text


def exact_match(pred: str, target: str, metric: dict) -> float:
    return 1.0 if normalise(pred, metric) == normalise(target, metric) else 0.0


def filter_spec(config_filter: dict) -> dict:
    """``{"regex", "group_select", "fallback"}`` from one lm-eval ``filter_list`` entry."""
    steps = config_filter.get("filter") or []
    rx = next((s for s in steps if isinstance(s, dict) and s.get("function") == "regex"), None)
    if rx is None or not isinstance(rx.get("regex_pattern"), str):
        raise ValueError(f"filter {config_filter.get('name')!r} has no regex step")
    return {"regex": rx["regex_pattern"], "group_select": int(rx.get("group_select", 0)),
            "fallback": rx.get("fallback", "[invalid]")}
