"""The scoring rules of the GSM8K task this checkout runs, pinned here and nowhere else.

``eval gsm8k`` runs lm-eval's own ``gsm8k`` task (``infersweep/evals/task.py``) from the
lm-eval release ``pyproject.toml`` pins; its two answer filters and its exact-match metric
are written below as that release defines them (a unit test holds them equal to the
installed task's). ``eval check`` scores with these and only these: the rules an eval
records in its ``eval.json`` are compared with them as text, never compiled, and an eval
that records other rules is refused (``[eval-rules]``). A pattern in a file the check
judges cannot slow it down or crash it, and cannot change what counts as a right answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

LM_EVAL_VERSION = "0.4.13"   # the release whose gsm8k.yaml (task version 3.0) these are
TASK_VERSION = 3.0
FALLBACK = "[invalid]"       # lm-eval's regex filter's answer when nothing matches


@dataclass(frozen=True)
class FilterRule:
    """One lm-eval ``regex`` filter: its pattern, which match it takes, and its fallback."""

    regex: str
    group_select: int
    fallback: str = FALLBACK

    def recorded(self) -> dict:
        """The rule as ``eval.json`` records it (``filters.<name>``)."""
        return {"regex": self.regex, "group_select": self.group_select,
                "fallback": self.fallback}


FILTERS: dict[str, FilterRule] = {
    "strict-match": FilterRule(r"#### (\-?[0-9\.\,]+)", 0),
    "flexible-extract": FilterRule(r"(-?[$0-9.,]{2,})|(-?[0-9]+)", -1),
}

# exact_match's settings, as eval.json records them (`metric`)
METRIC: dict = {"ignore_case": True, "ignore_punctuation": False,
                "regexes_to_ignore": [",", r"\$", "(?s).*#### ", r"\.$"]}

# compiled once, from the constants above only
COMPILED_FILTERS = {name: re.compile(rule.regex) for name, rule in FILTERS.items()}
COMPILED_IGNORED = tuple(re.compile(rx) for rx in METRIC["regexes_to_ignore"])


def differences(filters: object, metric: object) -> list[str]:
    """How an eval's recorded ``filters`` and ``metric`` differ from the pinned rules (empty:
    the same). Compared as data: nothing recorded is compiled or run."""
    found = []
    have = filters if isinstance(filters, dict) else {}
    for name, rule in FILTERS.items():
        got, want = have.get(name), rule.recorded()
        if got != want:
            found.append(f"filters.{name} is {_short(got)}, the task's is {_short(want)}")
    extra = sorted(str(k) for k in have if k not in FILTERS)
    if extra:
        found.append(f"filters has {', '.join(extra)}, which the task does not define")
    if metric != METRIC:
        found.append(f"metric is {_short(metric)}, the task's is {_short(METRIC)}")
    return found


def _short(value: object, n: int = 160) -> str:
    text = repr(value)
    return text if len(text) <= n else text[:n] + "…"
