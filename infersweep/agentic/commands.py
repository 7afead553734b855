"""``infersweep agentic``: traces, the replay client, and agentic results."""

from __future__ import annotations

import click


@click.group()
def agentic():
    """Agentic-coding rows: trace corpora, the pinned replay client, results and gates."""
