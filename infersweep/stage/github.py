"""The few GitHub REST calls staging makes, through one ghapi client per process.

Everything ghapi returns is turned into plain dicts and lists here, every HTTP or connection
failure into :class:`GitHubError` (status and GitHub's message), and pagination is done here
by hand: ghapi's own paged helpers stop only at an empty page, and a wrapped list
(``{"total_count": N, "artifacts": [...]}``) is never empty, so they would run to their page
limit. Lists follow the ``Link: rel="next"`` header; wrapped lists stop at ``total_count``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

PER_PAGE = 100
MAX_PAGES = 100  # 10,000 items: far above any PR's commits or timeline, a bound on a bad server
DEFAULT_API_URL = "https://api.github.com"
REPOSITORY = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}")


class GitHubError(Exception):
    """A GitHub API call failed: ``status`` is the HTTP status (None: no answer at all)."""

    def __init__(self, what: str, status: int | None, message: str):
        self.what, self.status, self.message = what, status, message
        code = f"HTTP {status}" if status is not None else "no answer"
        super().__init__(f"GitHub API: {what}: {code}: {message}")


def plain(obj: Any) -> Any:
    """ghapi's AttrDict / L values as plain dicts and lists."""
    if isinstance(obj, Mapping):
        return {str(k): plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)) or type(obj).__name__ == "L":
        return [plain(v) for v in obj]
    return obj


def _has_next(headers: Mapping | None) -> bool:
    link = (headers or {}).get("Link") or (headers or {}).get("link") or ""
    return any('rel="next"' in part for part in link.split(","))


class GitHub:
    """One repository's endpoints. ``api`` is a ghapi ``GhApi`` built with ``sync=True``."""

    def __init__(self, repository: str, token: str | None, api_url: str = DEFAULT_API_URL,
                 *, timeout: float = 30.0):
        from ghapi.all import GhApi

        owner, _, name = repository.partition("/")
        self.repository = repository
        self.api = GhApi(owner=owner, repo=name, token=token, gh_host=api_url.rstrip("/"),
                         authenticate=bool(token), timeout=timeout, sync=True)

    # -- plumbing ---------------------------------------------------------------------------
    def _call(self, what: str, fn: Callable, *args, **kwargs) -> Any:
        from ghapi.all import APIError

        try:
            return fn(*args, **kwargs)
        except APIError as exc:
            message = exc.message
            raw = exc.raw
            if isinstance(raw, Mapping) and raw.get("message"):
                message = str(raw["message"])
            raise GitHubError(what, exc.status_code, message[:300]) from None

    def _list(self, what: str, fn: Callable, *args, **kwargs) -> list[dict]:
        """A plain JSON list, page after page while ``Link`` names a next one."""
        out: list[dict] = []
        for page in range(1, MAX_PAGES + 1):
            items = plain(self._call(what, fn, *args, per_page=PER_PAGE, page=page, **kwargs))
            if not isinstance(items, list):
                raise GitHubError(what, 200, "expected a JSON list")
            out += items
            if not items or not _has_next(self.api.recv_hdrs):
                return out
        raise GitHubError(what, 200, f"more than {MAX_PAGES} pages")

    def _wrapped(self, what: str, key: str, fn: Callable, *args, **kwargs) -> list[dict]:
        """A ``{"total_count": N, key: [...]}`` list, page after page up to ``total_count``."""
        out: list[dict] = []
        for page in range(1, MAX_PAGES + 1):
            data = plain(self._call(what, fn, *args, per_page=PER_PAGE, page=page, **kwargs))
            items = data.get(key) if isinstance(data, dict) else None
            total = data.get("total_count") if isinstance(data, dict) else None
            if not isinstance(items, list) or not isinstance(total, int):
                raise GitHubError(what, 200, f"expected {{total_count, {key}}}")
            out += items
            if not items or len(out) >= total:
                return out
        raise GitHubError(what, 200, f"more than {MAX_PAGES} pages")

    # -- endpoints ----------------------------------------------------------------------------
    def issue(self, number: int) -> dict:
        return plain(self._call(f"issue #{number}", self.api.issues.get, number))

    def pull(self, number: int) -> dict:
        return plain(self._call(f"pull request #{number}", self.api.pulls.get, number))

    def pull_commits(self, number: int) -> list[str]:
        commits = self._list(f"commits of pull request #{number}",
                             self.api.pulls.list_commits, number)
        return [c["sha"] for c in commits if isinstance(c, dict) and isinstance(c.get("sha"), str)]

    def timeline(self, number: int) -> list[dict]:
        return self._list(f"timeline of #{number}", self.api.issues.list_events_for_timeline,
                          number)

    def permission(self, login: str) -> str:
        data = plain(self._call(f"permission of {login}",
                                self.api.repos.get_collaborator_permission_level, login))
        return str(data.get("permission") or "none")

    def run(self, run_id: int) -> dict:
        return plain(self._call(f"workflow run {run_id}", self.api.actions.get_workflow_run,
                                run_id))

    def workflow_runs(self, workflow_file: str, **filters) -> list[dict]:
        return self._wrapped(f"runs of {workflow_file}", "workflow_runs",
                             self.api.actions.list_workflow_runs, workflow_file, **filters)

    def artifacts(self, run_id: int) -> list[dict]:
        return self._wrapped(f"artifacts of run {run_id}", "artifacts",
                             self.api.actions.list_workflow_run_artifacts, run_id)

    def download_artifact(self, artifact_id: int, name: str) -> bytes:
        """The artifact's zip. GitHub answers 302 to short-lived storage; the client follows
        it without the token."""
        resp = self._call(f"artifact {name}", self.api.actions.download_artifact, artifact_id,
                          "zip", raw_=True)
        return bytes(resp.content)

    def create_comment(self, number: int, body: str) -> dict:
        return plain(self._call(f"comment on #{number}", self.api.issues.create_comment,
                                number, body=body))

    def update_comment(self, comment_id: int, body: str) -> dict:
        return plain(self._call(f"comment {comment_id}", self.api.issues.update_comment,
                                comment_id, body=body))
