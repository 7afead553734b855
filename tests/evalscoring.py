"""Scoring a GSM8K sample by whatever rules an eval.json records, as a forger (or a checker
that believes the eval) would: lm-eval's regex filter and exact-match metric applied with the
given patterns. Tests only: `eval check` never compiles a recorded pattern."""

from __future__ import annotations

import re
import string


def extract(spec: dict, text: str) -> str:
    """lm-eval's regex filter with a recorded ``{"regex", "group_select", "fallback"}``."""
    found = re.findall(spec["regex"], text if isinstance(text, str) else "")
    if not found:
        return spec["fallback"]
    m = found[spec["group_select"]]
    if isinstance(m, tuple):
        parts = [x for x in m if x]
        m = parts[0] if parts else spec["fallback"]
    return m.strip()


def exact_match(pred: str, target: str, metric: dict) -> float:
    """lm-eval's exact match with a recorded metric's settings."""
    def norm(text: str) -> str:
        for rx in metric.get("regexes_to_ignore") or []:
            text = re.sub(rx, "", text)
        if metric.get("ignore_case"):
            text = text.lower()
        if metric.get("ignore_punctuation"):
            text = text.translate(str.maketrans("", "", string.punctuation))
        return text

    return 1.0 if norm(pred) == norm(target) else 0.0
