"""Writing step outputs and job summaries the way GitHub Actions reads them."""

from __future__ import annotations

import os
import secrets


def format_output(name: str, value: str, *, multiline: bool = False) -> str:
    """One ``$GITHUB_OUTPUT`` entry: ``name=value``, or the delimiter form for multi-line
    (or explicitly ``multiline``) values, with a delimiter that cannot occur in the value."""
    if not multiline and "\n" not in value and "\r" not in value:
        return f"{name}={value}\n"
    delimiter = f"ghadelimiter_{secrets.token_hex(8)}"
    while delimiter in value:  # pragma: no cover - astronomically unlikely
        delimiter = f"ghadelimiter_{secrets.token_hex(8)}"
    return f"{name}<<{delimiter}\n{value}\n{delimiter}\n"


def append(path: str | None, text: str) -> bool:
    """Append ``text`` to the file GitHub reads (outputs, summary); False without a path."""
    if not path:
        return False
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(text)
    return True


def set_outputs(values: dict[str, str], path: str | None = None) -> bool:
    """Append outputs to ``path`` (default ``$GITHUB_OUTPUT``); False when there is none."""
    return append(path or os.environ.get("GITHUB_OUTPUT"),
                  "".join(format_output(k, v) for k, v in values.items()))


def add_summary(markdown: str, path: str | None = None) -> bool:
    """Append markdown to the step summary (default ``$GITHUB_STEP_SUMMARY``)."""
    return append(path or os.environ.get("GITHUB_STEP_SUMMARY"),
                  markdown.rstrip("\n") + "\n\n")
