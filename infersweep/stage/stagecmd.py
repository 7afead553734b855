"""``infersweep stage``: answer one ``/stage-results`` comment (the staging workflow's step)."""

from __future__ import annotations

import os
from pathlib import Path

import click
import orjson

from infersweep import ghactions
from infersweep.diagnostics import Diagnostic, InputError
from infersweep.evals.thresholds import DEFAULT_PATH
from infersweep.stage.flow import SITE_URL_ENV
from infersweep.store.commands import db_option

TOKEN_ENV = "GITHUB_TOKEN"


def _load_event(path: str | None) -> dict:
    if not path:
        raise InputError(Diagnostic("--event", 0, 0, "no event file",
                                    "pass --event FILE or run in GitHub Actions "
                                    "($GITHUB_EVENT_PATH)", "stage-event"))
    try:
        return orjson.loads(Path(path).read_bytes())
    except FileNotFoundError:
        raise InputError(Diagnostic(path, 0, 0, "no such event file",
                                    "pass the file GitHub writes to $GITHUB_EVENT_PATH",
                                    "stage-event")) from None
    except OSError as exc:
        raise InputError(Diagnostic(path, 0, 0, f"cannot read the event file: {exc.strerror}",
                                    rule="stage-event")) from None
    except orjson.JSONDecodeError as exc:
        raise InputError(Diagnostic(path, 0, 0, f"the event file is not JSON ({exc})",
                                    "pass the file GitHub writes to $GITHUB_EVENT_PATH",
                                    "stage-event")) from None


def _check_repository(value: str | None) -> str:
    from infersweep.stage.github import REPOSITORY

    if not value or REPOSITORY.fullmatch(value) is None:
        raise InputError(Diagnostic("--repository", 0, 0, f"{(value or '')[:80]!r} is not "
                                    "OWNER/NAME", "pass --repository or set $GITHUB_REPOSITORY",
                                    "stage-event"))
    return value


def _check_url(value: str, what: str) -> str:
    from urllib.parse import urlsplit

    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise InputError(Diagnostic(what, 0, 0, f"{value[:80]!r} is not an http(s) URL",
                                    "e.g. https://api.github.com", "stage-event"))
    return value


@click.command("stage")
@click.option("--event", "event_file", envvar="GITHUB_EVENT_PATH", default=None,
              help="The issue_comment payload [default: $GITHUB_EVENT_PATH].")
@click.option("--event-name", envvar="GITHUB_EVENT_NAME", default="issue_comment",
              show_default=True, help="The event's name [default: $GITHUB_EVENT_NAME]; other "
              "events are ignored.")
@click.option("--repository", envvar="GITHUB_REPOSITORY", default=None,
              help="OWNER/NAME [default: $GITHUB_REPOSITORY].")
@click.option("--api-url", envvar="GITHUB_API_URL", default="https://api.github.com",
              show_default=True, help="GitHub's REST API [default: $GITHUB_API_URL]; the "
              "token comes from $GITHUB_TOKEN.")
@click.option("--site-url", envvar=SITE_URL_ENV, default=None,
              help="Where the report is published, e.g. the GitHub Pages URL; the reply links "
                   f"the run's page under it [default: ${SITE_URL_ENV}].")
@click.option("--site-dir", type=click.Path(file_okay=False, path_type=Path),
              default=Path("site"), show_default=True, help="Where the report is rebuilt.")
@db_option()
@click.option("--thresholds", type=click.Path(dir_okay=False, path_type=Path),
              default=Path(DEFAULT_PATH), show_default=True,
              help="Eval thresholds of the eval gate (the trusted checkout's).")
@click.option("--eval-dataset", type=click.Path(dir_okay=False, path_type=Path),
              envvar="INFERSWEEP_EVAL_DATASET", default=None,
              help="The GSM8K test split (JSONL) the run's evals are checked against "
                   "[default: $INFERSWEEP_EVAL_DATASET, else the file each eval recorded, "
                   "when it is on this machine].")
@click.option("--workdir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Unpack the artifacts here (must not hold them yet) [default: a temporary "
                   "folder, removed afterwards].")
@click.option("--step-summary", envvar="GITHUB_STEP_SUMMARY", default=None,
              help="Append the outcome here [default: $GITHUB_STEP_SUMMARY].")
def stage(event_file, event_name, repository, api_url, site_url, site_dir, db, thresholds,
          eval_dataset, workdir, step_summary):
    """Answer a `/stage-results [<run-id>]` pull-request comment.

    Checks the commenter's permission, the pull request's labels and the run, acknowledges
    on the pull request, downloads the run's artifacts safely, applies `results check` and
    `eval check`, ingests into the results store, rebuilds the report and edits the
    acknowledgement to the outcome. Exit 0: staged, or not a staging comment; exit 1: refused
    or failed (the reply says why)."""
    from infersweep.stage import flow
    from infersweep.stage.github import GitHub

    output = os.environ.get("GITHUB_OUTPUT")
    ghactions.check_targets({"--step-summary": step_summary, "GITHUB_OUTPUT": output})
    payload = _load_event(event_file)
    req = flow.request_from_event(event_name, payload, str(event_file))
    if req is None:
        click.echo(f"not a new comment ({event_name} {payload.get('action')!r}): nothing to do")
        return
    repository = _check_repository(repository)
    if site_url:
        _check_url(site_url, "--site-url")
    token = os.environ.get(TOKEN_ENV) or None
    settings = flow.Settings(repository=repository, site_url=site_url, site_dir=site_dir,
                             db=db, thresholds=thresholds, workdir=workdir,
                             eval_dataset=eval_dataset)
    if flow.comment.parse(req.body).kind == flow.comment.IGNORE:
        click.echo("the comment is not /stage-results: nothing to do")
        return
    if token is None:
        raise InputError(Diagnostic(TOKEN_ENV, 0, 0, "no GitHub token",
                                    "set $GITHUB_TOKEN (the workflow passes github.token)",
                                    "stage-event"))
    gh = GitHub(repository, token, _check_url(api_url, "--api-url"))
    out = flow.Stager(gh, settings).run(req)
    click.echo(f"/stage-results: {out.status}" + (f", run {out.run_id}" if out.run_id else ""))
    if out.reply:
        click.echo(out.reply)
    ghactions.add_summary(flow.summary_markdown(out), step_summary)
    ghactions.set_outputs({"staged": "true" if out.status == flow.STAGED else "false",
                           "run-id": str(out.run_id or ""), "page-url": out.page_url or ""},
                          output)
    if out.exit_code:
        raise SystemExit(out.exit_code)
