"""The few GitHub REST calls staging makes, through one ghapi client per process.

Everything ghapi returns is turned into plain dicts and lists here, every HTTP or connection
failure into :class:`GitHubError` (status and GitHub's message), and pagination is done here
by hand: ghapi's own paged helpers stop only at an empty page, and a wrapped list
(``{"total_count": N, "artifacts": [...]}``) is never empty, so they would run to their page
limit. Lists follow the ``Link: rel="next"`` header; wrapped lists stop at ``total_count``.

The artifact download is the one call that does not go through ghapi, which reads a whole
answer into memory: it streams (the standard library's HTTP client) into a file under a
byte cap, and follows GitHub's redirect to blob storage itself, without the token.
"""

from __future__ import annotations

import io
import json
import re
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from http.client import HTTPException
from typing import Any, BinaryIO
from urllib.parse import urljoin, urlsplit

PER_PAGE = 100
MAX_PAGES = 100  # 10,000 items: far above any PR's commits or timeline, a bound on a bad server
MAX_DOWNLOAD = 1 << 30  # bytes of one artifact when the caller names no cap
CHUNK = 1 << 20
REDIRECTS = (301, 302, 303, 307, 308)
DEFAULT_API_URL = "https://api.github.com"
REPOSITORY = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}")


class GitHubError(Exception):
    """A GitHub API call failed: ``status`` is the HTTP status (None: no answer at all)."""

    def __init__(self, what: str, status: int | None, message: str):
        self.what, self.status, self.message = what, status, message
        code = f"HTTP {status}" if status is not None else "no answer"
        super().__init__(f"GitHub API: {what}: {code}: {message}")


class TooLarge(Exception):
    """A download that passed its byte cap; nothing after the cap was read."""

    def __init__(self, what: str, detail: str):
        self.what, self.detail = what, detail
        super().__init__(f"{what}: the download {detail}")


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Leave a redirect to the caller (as an HTTPError carrying ``Location``)."""

    def redirect_request(self, *args, **kwargs):
        return None


WEB_SCHEMES = ("http", "https")


class _WebOnlyRedirect(urllib.request.HTTPRedirectHandler):
    """Follow a redirect only to another http(s) URL: never to ``file:``, ``ftp:`` or
    ``data:``, which would read this machine's files (or another server) as the artifact."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        scheme = urlsplit(newurl).scheme.lower()
        if scheme not in WEB_SCHEMES:
            raise urllib.error.URLError(f"a redirect to a {scheme or 'schemeless'}: URL, not "
                                        "http(s), is not followed")
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def web_url(what: str, url: str) -> str:
    """``url`` when it is http(s); a GitHubError else (a redirect's target is never opened
    as a local file or through another scheme)."""
    scheme = urlsplit(url).scheme.lower()
    if scheme not in WEB_SCHEMES:
        raise GitHubError(what, None, f"a redirect to a {scheme or 'schemeless'}: URL, not "
                                      "http(s), is not followed")
    return url


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
        from ghapi.core import GhApi  # not ghapi.all: its actions module writes example
        # GITHUB_REPOSITORY and CONTEXT_* values into os.environ on import

        owner, _, name = repository.partition("/")
        self.repository = repository
        self.api_url, self.timeout = api_url.rstrip("/"), timeout
        self.api = GhApi(owner=owner, repo=name, token=token, gh_host=api_url.rstrip("/"),
                         authenticate=bool(token), timeout=timeout, sync=True)

    # -- plumbing ---------------------------------------------------------------------------
    def _call(self, what: str, fn: Callable, *args, **kwargs) -> Any:
        from ghapi.core import APIError

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

    def download_artifact(self, artifact_id: int, name: str,
                          max_bytes: int = MAX_DOWNLOAD) -> bytes:
        """The artifact's zip in memory (at most ``max_bytes``): see
        :meth:`download_artifact_to`, which writes it to a file instead."""
        buf = io.BytesIO()
        self.download_artifact_to(artifact_id, name, buf, max_bytes)
        return buf.getvalue()

    def download_artifact_to(self, artifact_id: int, name: str, out: BinaryIO,
                             max_bytes: int) -> int:
        """Stream the artifact's zip into ``out``; the bytes written. More than ``max_bytes``
        raises :class:`TooLarge`: before reading when the Content-Length says so, else as
        soon as the count passes it. GitHub answers 302 to short-lived blob storage (another
        origin, its URL signed): that request carries no token."""
        what = f"artifact {name}"
        url = f"{self.api_url}/repos/{self.repository}/actions/artifacts/{int(artifact_id)}/zip"
        headers = {"Accept": "application/vnd.github+json",
                   "X-GitHub-Api-Version": "2022-11-28"}
        if self.api.headers.get("Authorization"):  # as ghapi sends it on every other call
            headers["Authorization"] = self.api.headers["Authorization"]
        resp = self._open(what, urllib.request.Request(url, headers=headers), follow=False)
        if resp.status in REDIRECTS:
            location = resp.headers.get("Location")
            resp.close()
            if not location:
                raise GitHubError(what, resp.status, "a redirect without a Location")
            resp = self._open(what, urllib.request.Request(web_url(what, urljoin(url, location))),
                              follow=True)
        with resp:
            return _copy_capped(what, resp, out, max_bytes)

    def _open(self, what: str, request: urllib.request.Request, *, follow: bool):
        """The response, or the redirect itself when not ``follow``ing; GitHubError else."""
        web_url(what, request.full_url)
        handlers = (_WebOnlyRedirect(),) if follow else (_NoRedirect(),)
        try:
            return urllib.request.build_opener(*handlers).open(request, timeout=self.timeout)
        except urllib.error.HTTPError as exc:
            if not follow and exc.code in REDIRECTS:
                return exc
            raise GitHubError(what, exc.code, _message(exc)) from None
        except (urllib.error.URLError, HTTPException, OSError) as exc:
            reason = getattr(exc, "reason", None) or exc
            raise GitHubError(what, None, str(reason)[:300]) from None

    def create_comment(self, number: int, body: str) -> dict:
        return plain(self._call(f"comment on #{number}", self.api.issues.create_comment,
                                number, body=body))

    def update_comment(self, comment_id: int, body: str) -> dict:
        return plain(self._call(f"comment {comment_id}", self.api.issues.update_comment,
                                comment_id, body=body))


def _message(exc: urllib.error.HTTPError) -> str:
    """GitHub's ``message`` of an error answer, else the start of its body."""
    try:
        body = exc.read(4096)
    except (OSError, HTTPException):
        body = b""
    try:
        data = json.loads(body)
    except ValueError:
        data = None
    if isinstance(data, dict) and data.get("message"):
        return str(data["message"])[:300]
    return body.decode("utf-8", "replace").strip()[:300] or str(exc.reason)[:300]


def _copy_capped(what: str, resp, out: BinaryIO, max_bytes: int) -> int:
    length = resp.headers.get("Content-Length")
    if length and length.isdigit() and int(length) > max_bytes:
        raise TooLarge(what, f"announces {int(length)} bytes (Content-Length)")
    written = 0
    while True:
        try:
            chunk = resp.read(min(CHUNK, max_bytes - written + 1))
        except (OSError, HTTPException) as exc:
            raise GitHubError(what, None, f"the download broke off after {written} bytes: "
                                          f"{exc}"[:300]) from None
        if not chunk:
            return written
        written += len(chunk)
        if written > max_bytes:
            raise TooLarge(what, f"passed {max_bytes} bytes")
        out.write(chunk)
