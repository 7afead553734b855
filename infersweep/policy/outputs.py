"""Write a decision where GitHub Actions reads it: ``$GITHUB_OUTPUT`` and the step summary."""

from __future__ import annotations

import json
import secrets
from typing import Any

from infersweep.policy.decide import Decision


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    if isinstance(value, (list, dict)):
        return json.dumps(value, separators=(",", ":"), sort_keys=True)
    return str(value)


def _entry(key: str, text: str, multiline: bool) -> str:
    if not multiline and "\n" not in text and "\r" not in text:
        return f"{key}={text}\n"
    delimiter = f"ghadelimiter_{secrets.token_hex(8)}"
    while delimiter in text:  # pragma: no cover - astronomically unlikely
        delimiter = f"ghadelimiter_{secrets.token_hex(8)}"
    return f"{key}<<{delimiter}\n{text}\n{delimiter}\n"


def github_output(decision: Decision) -> str:
    """``key=value`` lines (JSON values in the heredoc form) plus ``decision-json``."""
    out = []
    for key, value in decision.to_dict().items():
        out.append(_entry(key, _scalar(value), isinstance(value, (list, dict))))
    out.append(_entry("decision-json", json.dumps(decision.to_dict(), sort_keys=True), True))
    return "".join(out)


def _cell(value: Any) -> str:
    text = _scalar(value) if not isinstance(value, str) else value
    return (text or "—").replace("|", "\\|").replace("\n", " ")


def step_summary(decision: Decision) -> str:
    """A markdown section: verdict, reason and every field."""
    icon = {"run": "▶️", "skip": "⏭️", "error": "❌"}.get(decision.decision, "")
    lines = [f"### Sweep decision: {icon} {decision.decision}", "", _cell(decision.reason), "",
             "| field | value |", "|---|---|"]
    for key, value in decision.to_dict().items():
        if key == "reason":
            continue
        lines.append(f"| `{key}` | {_cell(value)} |")
    return "\n".join(lines) + "\n\n"
