"""``infersweep agentic``: traces, the replay client, and agentic results."""

from __future__ import annotations

import click


@click.group()
def agentic():
    """Agentic-coding rows: trace corpora, the pinned replay client, results and gates."""


from infersweep.agentic.clientcmds import client  # noqa: E402 - registered on the group above

agentic.add_command(client)

from infersweep.agentic.resultcmds import check, process  # noqa: E402 - results and gates

agentic.add_command(process)
agentic.add_command(check)

from infersweep.agentic.tracecmds import register  # noqa: E402 - traces, tokenizer

register(agentic)

from infersweep.agentic.replaycmds import replay  # noqa: E402 - an agentic benchmark step

agentic.add_command(replay)

from infersweep.launch.artifactcmds import artifacts  # noqa: E402 - a job's upload pair

agentic.add_command(artifacts)
