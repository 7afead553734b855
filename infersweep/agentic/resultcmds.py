"""``infersweep agentic process`` and ``agentic check``: one result per row and concurrency,
judged by InferenceX's gates."""

from __future__ import annotations

from pathlib import Path

import click

from infersweep.atomic import check_writable


def _json_file(path: Path, what: str):
    from infersweep.agentic.resultexports import load_json_object

    return load_json_object(path, what)


@click.command("process")
@click.option("--artifacts", type=click.Path(path_type=Path), required=True,
              help="The replay's --output-artifact-dir (profile_export.jsonl and the rest).")
@click.option("--row", "row_file", type=click.Path(path_type=Path), required=True,
              help="The matrix row the replay ran (JSON, as `infersweep matrix` prints it).")
@click.option("--out", type=click.Path(path_type=Path), required=True,
              help="The result JSON (*.agentic.json), in a folder above the exports.")
@click.option("--framework", default=None,
              help="The engine framework (default: the row's).")
@click.option("--gpus", type=click.IntRange(min=1), default=None,
              help="GPUs the throughput is shared by (default: the row's parallelism).")
@click.option("--scaled-down-json", "scaled_file", type=click.Path(path_type=Path),
              default=None, help='What a local run shrank: {"duration": {"original": 3600, '
              '"run": 60}, ...}. The result is then never publishable.')
def process(artifacts, row_file, out, framework, gpus, scaled_file):
    """The replay's exports become one agentic result (InferenceX's agentic shape).

    Nothing is written when the exports, the row or the result are bad."""
    from infersweep.agentic import result as results

    check_writable(out, "--out")
    row = _json_file(row_file, "matrix row")
    results.check_row(row, row_file)
    scaled = _json_file(scaled_file, "scaled-down record") if scaled_file else None
    data = results.process(artifacts, row, framework=framework or str(row.get("framework")),
                           gpus=gpus or results.row_gpus(row), scaled=scaled)
    for w in data["warnings"]:
        click.echo(f"warning: {w}", err=True)
    results.write(data, out, artifacts)
    tput = data["request_metrics"]["throughput"]["per_gpu"].get("total_tput_tps")
    shown = "n/a" if tput is None else f"{tput:.1f}"
    click.echo(f"{out}: c={data['conc']}, {data['num_requests_successful']} request(s), "
               f"{shown} tok/s/GPU, publishable: {str(data['publishable']).lower()}", err=True)


@click.command("check")
@click.argument("sources", nargs=-1, required=True)
def check(sources):
    """The agentic gates on *.agentic.json results (folders searched); exit 1 on any problem.

    `infersweep results check` applies the same gates to a run folder."""
    from infersweep.agentic import gatepoints

    entries = gatepoints.examine(sources)
    if not entries:
        raise click.ClickException("no *.agentic.json result under the sources")
    problems = gatepoints.point_problems(entries, None)
    for kind, point, message, file in problems:
        click.echo(f"error: {point}: {kind}: {message}" + (f" [{file}]" if file else ""))
    asked, good = gatepoints.counts(entries, None)
    local = sum(1 for e in entries if not e["problems"] and not e["publishable"])
    verdict = "FAILED" if problems else "passed"
    click.echo(f"agentic check: {verdict}, {good} of {asked} point(s) pass, {local} of them "
               "local (not publishable)")
    if problems:
        raise SystemExit(1)
