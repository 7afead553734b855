"""Accuracy thresholds and question minimums per model prefix (``configs/eval-thresholds.yaml``).

Per task, a model's entry (or ``default``) may give the least score (``gsm8k``) and the
least number of questions an eval judged for staging must have asked
(``gsm8k-min-questions``); a file that says nothing of the minimum requires the whole GSM8K
test split. The file also pins, by content digest, the test splits an eval may be judged
against (``datasets``): the check trusts these, never the digests an eval recorded.
"""

from __future__ import annotations

from dataclasses import dataclass

from infersweep.config.schema import validate_doc
from infersweep.diagnostics import InputError
from infersweep.yamldoc import load_yaml

DEFAULT_PATH = "configs/eval-thresholds.yaml"
GSM8K_TEST_QUESTIONS = 1319  # the test split of openai/gsm8k (main)
FULL_SET = {"gsm8k": GSM8K_TEST_QUESTIONS}


@dataclass(frozen=True)
class Threshold:
    value: float
    source: str  # "default" or "models.<prefix>"


@dataclass(frozen=True)
class MinQuestions:
    value: int
    source: str  # "default", "models.<prefix>" or "the full test split" (the file says none)


def load(path: str) -> dict:
    doc = load_yaml(path)
    if doc.data is None:
        raise InputError(doc.diag((), "the threshold file is empty",
                                  "expected 'default: {gsm8k: 0.85}' and optional 'models:'"))
    diags = validate_doc(doc, "eval-thresholds")
    if diags:
        raise InputError(diags)
    return doc.data


def _lookup(data: dict, prefix: str | None, model: str, key: str) -> tuple[object, str] | None:
    """``key`` of the longest model prefix that has it, else of ``default``, else None."""
    models = data.get("models") or {}
    name = prefix or model or ""
    matches = [p for p in models if name.startswith(p) and key in models[p]]
    if matches:
        best = max(matches, key=len)
        return models[best][key], f"models.{best}"
    if key in (data.get("default") or {}):
        return data["default"][key], "default"
    return None


def for_model(data: dict, prefix: str | None, model: str, task: str = "gsm8k") -> Threshold:
    """The threshold of ``task`` for a model prefix (or, without one, the served model name)."""
    found = _lookup(data, prefix, model, task)
    if found is None:
        raise InputError(f"no '{task}' threshold in 'default' (nor for model prefix "
                         f"{prefix or model or ''!r})")
    return Threshold(float(found[0]), found[1])


def min_questions(data: dict, prefix: str | None, model: str, task: str = "gsm8k") -> MinQuestions:
    """How many questions an eval of ``task`` judged for staging must have asked at least."""
    found = _lookup(data, prefix, model, f"{task}-min-questions")
    if found is None:
        return MinQuestions(FULL_SET[task], "the full test split")
    return MinQuestions(int(found[0]), found[1])


@dataclass(frozen=True)
class PinnedSplit:
    name: str
    rows: int
    sha256: str


def pinned_splits(data: dict, task: str = "gsm8k") -> list[PinnedSplit]:
    """The test splits of ``task`` the file accepts (``datasets.<task>``; none: no split)."""
    listed = (data.get("datasets") or {}).get(task) or []
    return [PinnedSplit(str(s["name"]), int(s["rows"]), str(s["sha256"])) for s in listed]
