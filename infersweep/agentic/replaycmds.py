"""``infersweep agentic replay``: an agentic recipe's benchmark step for one concurrency."""

from __future__ import annotations

import json
from pathlib import Path

import click

from infersweep.clitypes import POSITIVE_INT


@click.command("replay")
@click.option("--row-json", "row_json", required=True,
              help="The matrix row (JSON), as the rendered recipe carries it.")
@click.option("--conc", type=POSITIVE_INT, required=True, help="Live sessions (lanes).")
@click.option("--url", required=True, help="The engine's front end, http://host:port.")
@click.option("--result-dir", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Where the point's result (<name>-c<conc>.agentic.json) and exports go.")
@click.option("--name", required=True, help="The recipe's name (the result's file stem).")
@click.option("--scale-down", type=click.FloatRange(min=1), default=1.0, show_default=True,
              help="Shorten the 3,600 s window, the warm-up and its grace by this factor (a "
                   "local run; its result says so and is never publishable).")
@click.option("--traces", type=click.Path(exists=True), default=None,
              help="A local folder of Weka traces instead of the row's pinned corpus "
                   "[default: $INFERSWEEP_AGENTIC_TRACES].")
@click.option("--tokenizer", default=None,
              help="A tokenizer folder or hub id [default: $INFERSWEEP_AGENTIC_TOKENIZER, "
                   "else the row's model].")
@click.option("--trace-override", default=None,
              help="Another alias of the pinned corpora (InferenceX's WEKA_LOADER_OVERRIDE).")
@click.option("--server-metrics", multiple=True,
              help="Prometheus endpoints to scrape [default: URL/metrics].")
@click.option("--client-venv", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="The replay client's venv [default: $INFERSWEEP_AGENTIC_CLIENT_VENV].")
def replay(row_json, conc, url, result_dir, name, scale_down, traces, tokenizer,
           trace_override, server_metrics, client_venv):
    """Replay the row's traces at CONC live sessions with the pinned client, then turn its
    exports into the point's agentic result. Exit 1 when the client fails."""
    from infersweep.agentic import replay as replays
    from infersweep.agentic.client import locate
    from infersweep.diagnostics import InputError

    try:
        row = json.loads(row_json)
    except ValueError as exc:
        raise InputError(f"--row-json: not JSON ({exc})") from None
    client = locate(client_venv)
    replays.run(row, conc=conc, url=url, result_dir=result_dir, name=name, client=client,
                scale_down=scale_down, traces=traces, tokenizer=tokenizer,
                trace_override=trace_override, server_metrics=tuple(server_metrics),
                echo=lambda m: click.echo(m, err=True))
