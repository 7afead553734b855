"""Webhook payloads for a replay: the fields GitHub sends that act passes on as
``github.event`` and ``$GITHUB_EVENT_PATH``, and that the project's commands read.

``infersweep policy decide`` reads (infersweep/policy/decide.py): ``action``,
``repository.full_name``/``default_branch``; for pull_request ``pull_request.number`` (or
``number``), ``labels[].name``, ``label.name``, ``draft``, ``head.sha``/``ref``/``repo.full_name``
(a head repository other than ``repository`` is a fork, which never runs),
``base.sha``/``ref``; for push ``ref``, ``before``, ``after``, ``head_commit.message``; for
workflow_dispatch ``ref`` and ``inputs``. ``infersweep stage`` (infersweep/stage/flow.py) reads
``action`` (``created``), ``issue.number``, ``issue.pull_request``, ``comment.body``,
``comment.user.login`` and ``comment.html_url``. Workflows read ``pull_request.title`` and
``head_commit.message`` for run names, and ``comment.id`` to react to a comment.
"""

from __future__ import annotations

from typing import Any

SENDER = "replay-user"


def repository_object(repository: str, default_branch: str = "main") -> dict[str, Any]:
    owner, name = repository.split("/")
    return {"full_name": repository, "name": name, "owner": {"login": owner},
            "default_branch": default_branch, "private": False, "fork": False,
            "html_url": f"https://github.com/{repository}",
            "clone_url": f"https://github.com/{repository}.git"}


def _user(login: str) -> dict[str, Any]:
    return {"login": login, "type": "User"}


def pull_request_event(*, repository: str, number: int, head_sha: str, base_sha: str,
                       head_ref: str = "replay/head", base_ref: str = "main",
                       action: str = "labeled", label: str | None = None,
                       labels: list[str] | tuple[str, ...] = (), title: str = "Replayed PR",
                       draft: bool = False, head_repository: str | None = None,
                       default_branch: str = "main", sender: str = SENDER) -> dict[str, Any]:
    """A ``pull_request`` payload. ``label`` is the label a labeled/unlabeled event acted on;
    ``labels`` the PR's labels after the event (``label`` is added for ``labeled``)."""
    names = list(dict.fromkeys([*labels, *([label] if label and action == "labeled" else [])]))
    repo = repository_object(repository, default_branch)
    head_repo = repository_object(head_repository or repository, default_branch)
    payload: dict[str, Any] = {
        "action": action,
        "number": number,
        "pull_request": {
            "number": number, "title": title, "state": "open", "draft": draft,
            "user": _user(sender),
            "html_url": f"https://github.com/{repository}/pull/{number}",
            "labels": [{"name": n} for n in names],
            "head": {"sha": head_sha, "ref": head_ref, "label": f"{head_repo['owner']['login']}:"
                     f"{head_ref}", "repo": head_repo},
            "base": {"sha": base_sha, "ref": base_ref, "label": f"{repo['owner']['login']}:"
                     f"{base_ref}", "repo": repo},
        },
        "repository": repo,
        "sender": _user(sender),
    }
    if label is not None:
        payload["label"] = {"name": label}
    return payload


def push_event(*, repository: str, after: str, before: str, message: str = "Replayed push",
               ref: str = "refs/heads/main", default_branch: str = "main",
               sender: str = SENDER) -> dict[str, Any]:
    return {
        "ref": ref, "before": before, "after": after,
        "head_commit": {"id": after, "message": message,
                        "author": {"name": sender, "email": f"{sender}@users.invalid"}},
        "commits": [{"id": after, "message": message}],
        "repository": repository_object(repository, default_branch),
        "pusher": {"name": sender}, "sender": _user(sender),
    }


def workflow_dispatch_event(*, repository: str, inputs: dict[str, str] | None = None,
                            ref: str = "refs/heads/main", default_branch: str = "main",
                            sender: str = SENDER) -> dict[str, Any]:
    return {"ref": ref, "inputs": dict(inputs or {}),
            "repository": repository_object(repository, default_branch),
            "sender": _user(sender)}


def issue_comment_event(*, repository: str, issue_number: int, body: str, user: str = SENDER,
                        comment_id: int = 1, is_pull_request: bool = True,
                        action: str = "created", default_branch: str = "main"
                        ) -> dict[str, Any]:
    issue: dict[str, Any] = {
        "number": issue_number, "title": "Replayed PR", "state": "open",
        "html_url": f"https://github.com/{repository}/"
                    f"{'pull' if is_pull_request else 'issues'}/{issue_number}",
        "user": _user(user),
    }
    if is_pull_request:
        issue["pull_request"] = {
            "url": f"https://api.github.com/repos/{repository}/pulls/{issue_number}",
            "html_url": f"https://github.com/{repository}/pull/{issue_number}"}
    return {
        "action": action, "issue": issue,
        "comment": {"id": comment_id, "body": body, "user": _user(user),
                    "html_url": f"https://github.com/{repository}/pull/{issue_number}"
                                f"#issuecomment-{comment_id}"},
        "repository": repository_object(repository, default_branch),
        "sender": _user(user),
    }
