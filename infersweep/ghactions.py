"""Writing step outputs and job summaries the way GitHub Actions reads them."""

from __future__ import annotations

import os
import uuid


def _append(env: str, text: str) -> bool:
    path = os.environ.get(env)
    if not path:
        return False
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(text)
    return True


def set_outputs(values: dict[str, str]) -> bool:
    """Append ``name=value`` pairs to $GITHUB_OUTPUT (multi-line values use a delimiter)."""
    chunks = []
    for name, value in values.items():
        if "\n" in value:
            delim = f"EOF_{uuid.uuid4().hex}"
            chunks.append(f"{name}<<{delim}\n{value}\n{delim}\n")
        else:
            chunks.append(f"{name}={value}\n")
    return _append("GITHUB_OUTPUT", "".join(chunks))


def add_summary(markdown: str) -> bool:
    """Append markdown to the job's step summary."""
    return _append("GITHUB_STEP_SUMMARY", markdown.rstrip("\n") + "\n\n")
