"""Writing step outputs and job summaries the way GitHub Actions reads them."""

from __future__ import annotations

import os
import secrets

from infersweep.atomic import append_all_or_nothing, check_writable


def format_output(name: str, value: str, *, multiline: bool = False) -> str:
    """One ``$GITHUB_OUTPUT`` entry: ``name=value``, or the delimiter form for multi-line
    (or explicitly ``multiline``) values, with a delimiter that cannot occur in the value."""
    if not multiline and "\n" not in value and "\r" not in value:
        return f"{name}={value}\n"
    delimiter = f"ghadelimiter_{secrets.token_hex(8)}"
    while delimiter in value:  # pragma: no cover - astronomically unlikely
        delimiter = f"ghadelimiter_{secrets.token_hex(8)}"
    return f"{name}<<{delimiter}\n{value}\n{delimiter}\n"


def append(path: str | None, text: str, what: str = "GitHub Actions file") -> bool:
    """Append ``text`` to the file GitHub reads (outputs, summary); False without a path.

    All or nothing: a file that cannot be written raises
    :class:`~infersweep.atomic.OutputError` and keeps its old content."""
    if not path:
        return False
    append_all_or_nothing(path, text, what)
    return True


def check_targets(paths: dict[str, str | None]) -> None:
    """Before any work: every given output file (``{what: path}``) can be appended to, so an
    unusable ``$GITHUB_OUTPUT`` fails the step at once, not after the work is done."""
    for what, path in paths.items():
        if path:
            check_writable(path, what)


def set_outputs(values: dict[str, str], path: str | None = None) -> bool:
    """Append outputs to ``path`` (default ``$GITHUB_OUTPUT``); False when there is none."""
    return append(path or os.environ.get("GITHUB_OUTPUT"),
                  "".join(format_output(k, v) for k, v in values.items()), "GITHUB_OUTPUT")


def add_summary(markdown: str, path: str | None = None) -> bool:
    """Append markdown to the step summary (default ``$GITHUB_STEP_SUMMARY``)."""
    return append(path or os.environ.get("GITHUB_STEP_SUMMARY"),
                  markdown.rstrip("\n") + "\n\n", "GITHUB_STEP_SUMMARY")
