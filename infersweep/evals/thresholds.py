"""Accuracy thresholds per model prefix (``configs/eval-thresholds.yaml``)."""

from __future__ import annotations

from dataclasses import dataclass

from infersweep.config.schema import validate_doc
from infersweep.diagnostics import InputError
from infersweep.yamldoc import load_yaml

DEFAULT_PATH = "configs/eval-thresholds.yaml"


@dataclass(frozen=True)
class Threshold:
    value: float
    source: str  # "default" or "models.<prefix>"


def load(path: str) -> dict:
    doc = load_yaml(path)
    if doc.data is None:
        raise InputError(doc.diag((), "the threshold file is empty",
                                  "expected 'default: {gsm8k: 0.85}' and optional 'models:'"))
    diags = validate_doc(doc, "eval-thresholds")
    if diags:
        raise InputError(diags)
    return doc.data


def for_model(data: dict, prefix: str | None, model: str, task: str = "gsm8k") -> Threshold:
    """The threshold of ``task`` for a model prefix (or, without one, the served model name)."""
    models = data.get("models") or {}
    name = prefix or model or ""
    matches = [p for p in models if name.startswith(p) and task in models[p]]
    if matches:
        best = max(matches, key=len)
        return Threshold(float(models[best][task]), f"models.{best}")
    if task not in data["default"]:
        raise InputError(f"no '{task}' threshold in 'default' (nor for model prefix {name!r})")
    return Threshold(float(data["default"][task]), "default")
