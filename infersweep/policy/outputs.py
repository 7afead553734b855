"""Write a decision where GitHub Actions reads it: ``$GITHUB_OUTPUT`` and the step summary."""

from __future__ import annotations

import json
from typing import Any

from infersweep.ghactions import format_output
from infersweep.policy.decide import Decision


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    if isinstance(value, (list, dict)):
        return json.dumps(value, separators=(",", ":"), sort_keys=True)
    return str(value)


def github_output(decision: Decision) -> str:
    """``key=value`` lines (JSON values in the heredoc form) plus ``decision-json``."""
    out = []
    for key, value in decision.to_dict().items():
        out.append(format_output(key, _scalar(value), multiline=isinstance(value, (list, dict))))
    out.append(format_output("decision-json", json.dumps(decision.to_dict(), sort_keys=True),
                             multiline=True))
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
