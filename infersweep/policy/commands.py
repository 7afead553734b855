"""``infersweep policy``: the sweep decision for a GitHub event, and the label vocabulary."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import click

from infersweep import ghactions, gitexec
from infersweep.diagnostics import Diagnostic, InputError


@click.group()
def policy():
    """PR labels + GitHub event -> sweep decision."""


def _read_event(path: str) -> dict:
    try:
        text = Path(path).read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(Diagnostic(path, 0, 0, f"event file is not UTF-8 text (byte "
                                    f"{exc.start} cannot be decoded)",
                                    "pass the payload GitHub wrote to $GITHUB_EVENT_PATH",
                                    "policy-event")) from None
    except FileNotFoundError:
        raise InputError(Diagnostic(path, 0, 0, "event file not found",
                                    "pass --event-path or set GITHUB_EVENT_PATH",
                                    "policy-event")) from None
    except IsADirectoryError:
        raise InputError(Diagnostic(path, 0, 0, "event file is a directory",
                                    "pass the payload file GitHub wrote to $GITHUB_EVENT_PATH",
                                    "policy-event")) from None
    except OSError as exc:
        raise InputError(Diagnostic(path, 0, 0, f"cannot read event file: {exc.strerror}",
                                    rule="policy-event")) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(Diagnostic(path, exc.lineno, exc.colno,
                                    f"event file is not valid JSON: {exc.msg}",
                                    "pass the payload GitHub wrote to $GITHUB_EVENT_PATH",
                                    "policy-event")) from None
    except RecursionError:
        raise InputError(Diagnostic(path, 0, 0, "event file is nested too deeply to be a "
                                    "GitHub payload", rule="policy-event")) from None


def _message_from_git(repo_dir: str, sha: str) -> str | None:
    """The commit message of ``sha`` in a local checkout, or None when it is not there.

    ``sha`` comes from the payload: it must be a full SHA and is passed after
    ``--end-of-options``, so it can never be read as an option of git log."""
    if not sha or gitexec.FULL_SHA.fullmatch(sha) is None:
        return None
    try:
        done = gitexec.run(["-C", repo_dir, "log", "-1", "--format=%B",
                            gitexec.END_OF_OPTIONS, sha, "--"], timeout=20)
    except gitexec.GitMissing:
        click.echo(f"warning: {gitexec.GIT_MISSING}: the head commit message was not read, so "
                   "[skip-sweep] is not honoured (pass --head-commit-message)", err=True)
        return None
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def _event_name(ctx, param, value):
    from infersweep.diagnostics import did_you_mean
    from infersweep.policy.decide import GITHUB_EVENTS, SWEEP_EVENTS

    if value is not None and value not in GITHUB_EVENTS:
        near = did_you_mean(value, sorted(GITHUB_EVENTS))
        raise click.BadParameter(
            f"{value!r} is not a GitHub Actions event name{f' ({near})' if near else ''}; "
            f"the sweep runs on {', '.join(SWEEP_EVENTS)} (pass $GITHUB_EVENT_NAME)", ctx, param)
    return value


@policy.command()
@click.option("--event-path", envvar="GITHUB_EVENT_PATH", required=True,
              help="Webhook payload JSON (default: $GITHUB_EVENT_PATH).")
@click.option("--event-name", envvar="GITHUB_EVENT_NAME", required=True, callback=_event_name,
              help="pull_request, push, workflow_dispatch, ... (default: $GITHUB_EVENT_NAME).")
@click.option("--head-commit-message", envvar="INFERSWEEP_HEAD_COMMIT_MESSAGE", default=None,
              help="Head commit message, for the [skip-sweep] marker. pull_request payloads do "
                   "not carry it: without this option it is read with git from --repo-dir.")
@click.option("--repo-dir", default=".", show_default=True, type=click.Path(file_okay=False),
              help="Checkout to read the PR head commit message from.")
@click.option("--repository", envvar="GITHUB_REPOSITORY", default="",
              help="owner/name, when the payload lacks it (default: $GITHUB_REPOSITORY).")
@click.option("--run-id", envvar="GITHUB_RUN_ID", default="",
              help="Used in the concurrency group of events that must not cancel a sweep.")
@click.option("--sha", envvar="GITHUB_SHA", default="",
              help="Commit for events whose payload has none (default: $GITHUB_SHA).")
@click.option("--github-output", envvar="GITHUB_OUTPUT", default=None,
              help="Append key=value outputs here (default: $GITHUB_OUTPUT).")
@click.option("--step-summary", envvar="GITHUB_STEP_SUMMARY", default=None,
              help="Append a markdown table here (default: $GITHUB_STEP_SUMMARY).")
def decide(event_path, event_name, head_commit_message, repo_dir, repository, run_id, sha,
           github_output, step_summary):
    """Decide whether and how the sweep runs; print the decision as JSON.

    Exit 0 for run and skip, 1 for an error (e.g. two primary labels).
    """
    from infersweep.policy.decide import PR_EVENTS, facts_from_event
    from infersweep.policy.decide import decide as decide_facts
    from infersweep.policy.outputs import github_output as render_output
    from infersweep.policy.outputs import step_summary as render_summary

    ghactions.check_targets({"--github-output": github_output, "--step-summary": step_summary})
    payload = _read_event(event_path)
    facts = facts_from_event(event_name, payload, head_commit_message=head_commit_message,
                             repository=repository, run_id=run_id, sha=sha, path=event_path)
    if facts.head_commit_message is None and facts.event in PR_EVENTS:
        message = _message_from_git(repo_dir, facts.head_sha)
        if message is not None:
            facts = facts_from_event(event_name, payload, head_commit_message=message,
                                     repository=repository, run_id=run_id, sha=sha,
                                     path=event_path)
    decision = decide_facts(facts)
    click.echo(json.dumps(decision.to_dict(), indent=2, sort_keys=False))
    ghactions.append(github_output, render_output(decision), "--github-output")
    ghactions.append(step_summary, render_summary(decision), "--step-summary")
    if decision.decision == "error":
        raise InputError(Diagnostic(event_path, 0, 0, decision.reason,
                                    "fix the PR labels and re-run", "policy-labels"))
    click.echo(f"{decision.decision}: {decision.reason}", err=True)


@policy.command()
@click.option("--format", "fmt", type=click.Choice(["markdown", "json"]), default="markdown",
              show_default=True)
def labels(fmt):
    """Every label the sweep recognises and what it does."""
    from infersweep.policy.labels import label_table

    rows = label_table()
    if fmt == "json":  # booleans as booleans; a field that does not apply to a kind is null
        as_bool = {"yes": True, "no": False, "": None}
        typed = [{k: as_bool.get(v, v) if k in ("canary", "fail-fast") else v
                  for k, v in row.items()} for row in rows]
        for row in typed:
            row["stageable"] = {"yes": True, "no": False}.get(row["stageable"],
                                                               row["stageable"])
            row["matrix"] = row["matrix"] or None
        click.echo(json.dumps(typed, indent=2))
        return
    from tabulate import tabulate

    click.echo(tabulate(rows, headers="keys", tablefmt="github"))
