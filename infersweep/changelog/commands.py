"""`infersweep changelog check|matrix`: the PR gate and the changelog-driven matrix."""

from __future__ import annotations

import json
from pathlib import Path

import click
from tabulate import tabulate

from infersweep import ghactions
from infersweep.changelog import buckets
from infersweep.changelog.change import CHANGELOG, load_change
from infersweep.changelog.process import Modifiers, build_matrix


def _refs(f):
    for option in reversed([
        click.option("--base-ref", required=True, help="The PR's base (e.g. origin/main)."),
        click.option("--head-ref", required=True, help="The PR's head commit."),
        click.option("--changelog-file", default=CHANGELOG, show_default=True),
        click.option("--repo", "root", type=click.Path(path_type=Path, file_okay=False),
                     default=Path("."), help="Repository root (default: current directory)."),
        click.option("--pr-number", type=int,
                     help="When given, appended pr-links must name this PR (or XXX)."),
    ]):
        f = option(f)
    return f


@click.group()
def changelog():
    """The append-only perf changelog: gate a PR, build its sweep matrix."""


def _warn(change):
    for w in change.warnings:
        click.echo(f"warning: {w}", err=True)


@changelog.command()
@_refs
def check(base_ref, head_ref, changelog_file, root, pr_number):
    """Fail unless the head only appends valid entries whose keys exist at the head."""
    change = load_change(root, base_ref, head_ref, changelog_file, pr_number)
    _warn(change)
    rows = [[change.appended.doc.locate((i,))[0], ", ".join(keys),
             ", ".join(e.get("scenario-type") or ["all"]),
             "append-only" if e.get("append-only") else "evals-only" if e.get("evals-only")
             else "all-evals" if e.get("all-evals") else "full"]
            for i, (e, keys) in enumerate(zip(change.entries, change.keys, strict=True))]
    table = tabulate(rows, headers=["line", "config keys", "scenarios", "mode"],
                     tablefmt="github")
    click.echo(f"ok: {len(rows)} entr{'y' if len(rows) == 1 else 'ies'} appended to "
               f"{changelog_file} since {change.base_commit[:12]}\n{table}")
    ghactions.add_summary(f"### Changelog check\n\n{table}")


@changelog.command()
@_refs
@click.option("--trim-conc", is_flag=True, help="Keep only the lowest point of each curve.")
@click.option("--all-evals", is_flag=True, help="Evaluate every eligible point.")
@click.option("--evals-only", is_flag=True, help="Run evals, no throughput.")
@click.option("--canary/--no-canary", default=False,
              help="Split off the cheapest throughput point to run first (job outputs).")
@click.option("--job-outputs", is_flag=True,
              help="Also write one row list per run-sweep job to $GITHUB_OUTPUT.")
def matrix(base_ref, head_ref, changelog_file, root, pr_number, trim_conc, all_evals,
           evals_only, canary, job_outputs):
    """The bucketed sweep matrix for the entries the head appends (JSON on stdout)."""
    change = load_change(root, base_ref, head_ref, changelog_file, pr_number)
    _warn(change)
    result = build_matrix(change, Modifiers(trim_conc, all_evals, evals_only), root)
    click.echo(json.dumps(result, separators=(",", ":")))
    if job_outputs:
        outputs = buckets.job_outputs(result)
        first = buckets.take_canary(outputs) if canary else None
        values = {name: json.dumps(rows, separators=(",", ":")) for name, rows in outputs.items()}
        values |= {f"has-{name}": str(bool(rows)).lower() for name, rows in outputs.items()}
        values["canary"] = json.dumps([first] if first else [], separators=(",", ":"))
        values["has-canary"] = str(first is not None).lower()
        values["changelog-metadata"] = json.dumps(result["changelog_metadata"])
        ghactions.set_outputs(values)
        summary = [[name, len(rows)] for name, rows in outputs.items()]
        summary.append(["canary", 1 if first else 0])
        ghactions.add_summary("### Sweep matrix\n\n" + tabulate(
            summary, headers=["job", "rows"], tablefmt="github"))
