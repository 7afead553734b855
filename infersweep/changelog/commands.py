"""`infersweep changelog check|matrix`: the PR gate and the changelog-driven matrix."""

from __future__ import annotations

import json
from pathlib import Path

import click
from tabulate import tabulate

from infersweep import ghactions
from infersweep.atomic import write_atomic
from infersweep.changelog import buckets
from infersweep.changelog.change import CHANGELOG, load_change
from infersweep.changelog.process import Modifiers, build_matrix


def _refs(f):
    for option in reversed([
        click.option("--base-ref", help="The PR's base (e.g. origin/main)."),
        click.option("--head-ref", help="The PR's head commit."),
        click.option("--decision", "decision_json", metavar="PATH|-|JSON",
                     help="A `policy decide` decision (a file, - for stdin, or the JSON "
                          "text); supplies refs and modifiers."),
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


def _from_decision(decision_json, base_ref, head_ref):
    """(base, head, decision dict) from explicit refs or a policy decision."""
    decision = {}
    if decision_json:
        from infersweep.policy.decision_input import load_decision

        decision = load_decision(decision_json)
        base_ref = base_ref or decision.get("diff-base")
        head_ref = head_ref or decision.get("diff-head")
    if not base_ref or not head_ref:
        raise click.UsageError("give --base-ref and --head-ref (or a --decision that has them)")
    return base_ref, head_ref, decision


def _warn(change):
    for w in change.warnings:
        click.echo(f"warning: {w}", err=True)


@changelog.command()
@_refs
def check(base_ref, head_ref, decision_json, changelog_file, root, pr_number):
    """Fail unless the head only appends valid entries whose keys exist at the head."""
    base_ref, head_ref, decision = _from_decision(decision_json, base_ref, head_ref)
    pr_number = pr_number or decision.get("pr-number")
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
@click.option("--metadata-out", type=click.Path(path_type=Path),
              help="Write the changelog metadata (for ingestion) to this file.")
def matrix(base_ref, head_ref, decision_json, changelog_file, root, pr_number, trim_conc,
           all_evals, evals_only, canary, job_outputs, metadata_out):
    """The bucketed sweep matrix for the entries the head appends (JSON on stdout)."""
    base_ref, head_ref, decision = _from_decision(decision_json, base_ref, head_ref)
    trim_conc = trim_conc or bool(decision.get("trim-conc"))
    all_evals = all_evals or bool(decision.get("all-evals"))
    evals_only = evals_only or bool(decision.get("evals-only"))
    canary = canary or bool(decision.get("canary"))
    change = load_change(root, base_ref, head_ref, changelog_file, pr_number)
    _warn(change)
    result = build_matrix(change, Modifiers(trim_conc, all_evals, evals_only), root)
    click.echo(json.dumps(result, separators=(",", ":")))
    if metadata_out:
        write_atomic(metadata_out, json.dumps(result["changelog_metadata"], indent=2) + "\n")
    if job_outputs:
        outputs = buckets.job_outputs(result)
        first = buckets.take_canary(outputs) if canary else None
        side = "multi-node" if first and first.get("prefill") is not None else "single-node"
        outputs[f"canary-{side}"] = [first] if first else []
        values = {name: json.dumps(rows, separators=(",", ":")) for name, rows in outputs.items()}
        values |= {f"has-{name}": str(bool(rows)).lower() for name, rows in outputs.items()}
        ghactions.set_outputs(values)
        summary = [[name, len(rows)] for name, rows in outputs.items()]
        ghactions.add_summary("### Sweep matrix\n\n" + tabulate(
            summary, headers=["job", "rows"], tablefmt="github"))
