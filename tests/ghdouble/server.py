"""A test double of GitHub's REST API: a local threaded HTTP server with in-memory state.

It answers the endpoints staging uses with the response shapes and status codes GitHub
documents: issue comments (create 201, update 200), an issue, a pull request, its commits and
its issue timeline (plain lists, ``per_page``/``page`` and a ``Link`` header), a collaborator's
permission, a workflow run (404 when missing), a workflow's runs and a run's artifacts
(wrapped lists with ``total_count``, ``per_page``/``page`` honoured), and an artifact's zip:
``302`` to a storage URL (a second listener of the same double, so another origin, as GitHub's
blob storage is) that serves ``application/zip`` and refuses a request that carries the
API token; ``410`` for an expired artifact. Every API request needs the token
(``Authorization: token …`` or ``Bearer …``), else ``401``. An artifact may be served as a
stream (chunked, no Content-Length, as large as a test wants, counted in ``State.sent``) and
listed with a size that is not its own.
"""

from __future__ import annotations

import json
import re
import secrets
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

DOCS = "https://docs.github.com/rest"


def _user(login: str, uid: int = 1, kind: str = "User") -> dict:
    return {"login": login, "id": uid, "node_id": f"U_{uid}", "type": kind,
            "site_admin": False, "html_url": f"https://github.com/{login}"}


@dataclass
class State:
    repository: str
    token: str
    issues: dict[int, dict] = field(default_factory=dict)
    pulls: dict[int, dict] = field(default_factory=dict)
    commits: dict[int, list[dict]] = field(default_factory=dict)
    timelines: dict[int, list[dict]] = field(default_factory=dict)
    permissions: dict[str, str] = field(default_factory=dict)
    runs: dict[int, dict] = field(default_factory=dict)
    artifacts: dict[int, list[dict]] = field(default_factory=dict)   # run id -> artifacts
    blobs: dict[int, bytes] = field(default_factory=dict)            # artifact id -> zip
    # artifact id -> the chunks of a streamed answer; bytes the storage listener sent of it
    streams: dict[int, Callable[[], Iterable[bytes]]] = field(default_factory=dict)
    sent: dict[int, int] = field(default_factory=dict)
    comments: dict[int, dict] = field(default_factory=dict)
    gone: set[int] = field(default_factory=set)   # artifacts that expire after being listed
    log: list[tuple[str, str, str | None]] = field(default_factory=list)  # method, path, auth
    storage_log: list[tuple[str, str | None]] = field(default_factory=list)
    next_id: int = 9000


class GitHubDouble:
    """``with GitHubDouble() as gh:`` starts both listeners; ``gh.url`` is the API base."""

    def __init__(self, repository: str = "octo-org/infersweep", token: str = "test-token"):
        self.state = State(repository, token)
        self.lock = threading.Lock()
        self._servers: list[ThreadingHTTPServer] = []

    # -- lifecycle ----------------------------------------------------------------------------
    def __enter__(self) -> GitHubDouble:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self) -> None:
        for handler in (_api_handler(self), _storage_handler(self)):
            srv = ThreadingHTTPServer(("127.0.0.1", 0), handler)
            srv.daemon_threads = True
            threading.Thread(target=srv.serve_forever, daemon=True).start()
            self._servers.append(srv)

    def stop(self) -> None:
        for srv in self._servers:
            srv.shutdown()
            srv.server_close()
        self._servers.clear()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._servers[0].server_address[1]}"

    @property
    def storage_url(self) -> str:
        return f"http://127.0.0.1:{self._servers[1].server_address[1]}"

    def _id(self) -> int:
        with self.lock:
            self.state.next_id += 1
            return self.state.next_id

    # -- state set-up -----------------------------------------------------------------------
    @property
    def repo_json(self) -> dict:
        owner, name = self.state.repository.split("/")
        return {"id": 42, "node_id": "R_42", "name": name, "full_name": self.state.repository,
                "owner": _user(owner, 2, "Organization"), "private": False, "fork": False,
                "html_url": f"https://github.com/{self.state.repository}",
                "url": f"{self.url}/repos/{self.state.repository}", "default_branch": "main"}

    def add_issue(self, number: int, *, author: str = "alice", labels=()) -> dict:
        """An issue that is not a pull request."""
        issue = {"id": 100 + number, "node_id": f"I_{number}", "number": number,
                 "title": f"issue {number}", "state": "open", "user": _user(author),
                 "labels": [self._label(n) for n in labels], "body": "",
                 "url": f"{self.url}/repos/{self.state.repository}/issues/{number}",
                 "html_url": f"https://github.com/{self.state.repository}/issues/{number}",
                 "comments": 0, "created_at": "2026-11-30T08:00:00Z",
                 "updated_at": "2026-11-30T08:00:00Z", "author_association": "MEMBER"}
        self.state.issues[number] = issue
        return issue

    @staticmethod
    def _label(name: str) -> dict:
        return {"id": abs(hash(name)) % 10**8, "node_id": f"LA_{name}", "name": name,
                "color": "0e8a16", "default": False, "description": None}

    def add_pull(self, number: int, *, head_sha: str, commits: list[str], labels=(),
                 author: str = "alice", fork: str | None = None,
                 label_events: list[tuple[str, str, str]] = ()) -> dict:
        """A pull request (and its issue); ``label_events``: (event, label, created_at)."""
        issue = self.add_issue(number, author=author, labels=labels)
        base = f"https://github.com/{self.state.repository}/pull/{number}"
        issue["html_url"] = base  # a pull request's issue links to the pull request
        issue["pull_request"] = {"url": f"{self.url}/repos/{self.state.repository}/pulls/"
                                        f"{number}", "html_url": base,
                                 "diff_url": base + ".diff", "patch_url": base + ".patch",
                                 "merged_at": None}
        head_repo = dict(self.repo_json)
        if fork:
            head_repo.update(full_name=fork, fork=True, name=fork.split("/")[1],
                             owner=_user(fork.split("/")[0], 77))
        pull = {"id": 500 + number, "node_id": f"PR_{number}", "number": number,
                "state": "open", "title": issue["title"], "user": _user(author),
                "labels": issue["labels"], "draft": False,
                "html_url": base, "url": issue["pull_request"]["url"],
                "head": {"label": f"{author}:feature", "ref": "feature", "sha": head_sha,
                         "user": _user(author), "repo": head_repo},
                "base": {"label": "octo-org:main", "ref": "main", "sha": "b" * 40,
                         "user": _user("octo-org", 2), "repo": self.repo_json},
                "created_at": "2026-11-30T08:00:00Z", "updated_at": "2026-11-30T08:00:00Z"}
        self.state.pulls[number] = pull
        self.state.commits[number] = [
            {"sha": sha, "node_id": f"C_{sha[:8]}", "commit": {"message": f"commit {i}",
             "author": {"name": author, "date": "2026-11-30T08:00:00Z"}},
             "author": _user(author), "parents": []} for i, sha in enumerate(commits)]
        self.state.timelines[number] = [
            {"id": 7000 + i, "node_id": f"LE_{i}", "event": event, "actor": _user(author),
             "commit_id": None, "commit_url": None, "created_at": at,
             "label": {"name": name, "color": "0e8a16"}, "performed_via_github_app": None}
            for i, (event, name, at) in enumerate(label_events)]
        return pull

    def add_comment_events(self, number: int, count: int) -> None:
        """Timeline noise (commented events) so the timeline spans several pages."""
        for i in range(count):
            self.state.timelines[number].insert(0, {
                "id": 80000 + i, "node_id": f"IC_{i}", "event": "commented",
                "actor": _user("bob"), "created_at": "2026-11-30T07:00:00Z", "body": "hi",
                "user": _user("bob")})

    def add_run(self, run_id: int, *, head_sha: str, created_at: str,
                path: str = ".github/workflows/run-sweep.yml", event: str = "pull_request",
                status: str = "completed", conclusion: str | None = "success",
                attempt: int = 1, pr_numbers=(), repository: str | None = None) -> dict:
        repo = dict(self.repo_json)
        if repository:
            repo["full_name"] = repository
        run = {"id": run_id, "name": "Run Sweep", "node_id": f"WFR_{run_id}",
               "head_branch": "feature", "head_sha": head_sha, "path": path,
               "display_title": "Run Sweep", "run_number": run_id % 1000, "event": event,
               "status": status, "conclusion": conclusion, "workflow_id": 161335,
               "check_suite_id": run_id + 1,
               "url": f"{self.url}/repos/{self.state.repository}/actions/runs/{run_id}",
               "html_url": f"https://github.com/{self.state.repository}/actions/runs/{run_id}",
               "pull_requests": [{"number": n} for n in pr_numbers],
               "created_at": created_at, "updated_at": created_at, "run_attempt": attempt,
               "run_started_at": created_at, "actor": _user("alice"),
               "triggering_actor": _user("alice"), "repository": repo, "head_repository": repo,
               "artifacts_url": f"{self.url}/repos/{self.state.repository}/actions/runs/"
                                f"{run_id}/artifacts"}
        self.state.runs[run_id] = run
        self.state.artifacts.setdefault(run_id, [])
        return run

    def add_artifact(self, run_id: int, name: str, data: bytes, *, expired: bool = False,
                     created_at: str = "2026-12-01T10:00:00Z",
                     stream: Callable[[], Iterable[bytes]] | None = None,
                     size_in_bytes: int | None = None) -> dict:
        """``stream``: serve the chunks it yields instead of ``data``, chunked (no
        Content-Length); ``size_in_bytes``: the size the listing says (default: the data's)."""
        art_id = self._id()
        run = self.state.runs[run_id]
        base = f"{self.url}/repos/{self.state.repository}/actions/artifacts/{art_id}"
        listed = len(data) if size_in_bytes is None else size_in_bytes
        art = {"id": art_id, "node_id": f"MDg6QXJ0aWZhY3Q{art_id}", "name": name,
               "size_in_bytes": listed, "url": base, "archive_download_url": base + "/zip",
               "expired": expired, "digest": None, "created_at": created_at,
               "updated_at": created_at, "expires_at": "2027-03-01T10:00:00Z",
               "workflow_run": {"id": run_id, "repository_id": 42, "head_repository_id": 42,
                                "head_branch": run["head_branch"], "head_sha": run["head_sha"]}}
        self.state.artifacts[run_id].append(art)
        self.state.blobs[art_id] = data
        if stream is not None:
            self.state.streams[art_id] = stream
        return art

    def comments_on(self, number: int) -> list[dict]:
        return [c for c in self.state.comments.values()
                if c["issue_url"].endswith(f"/issues/{number}")]

    def event(self, number: int, login: str, body: str) -> dict:
        """An ``issue_comment`` ``created`` webhook payload, in GitHub's documented shape."""
        issue = self.state.issues[number]
        cid = self._id()
        return {
            "action": "created",
            "issue": issue,
            "comment": {"id": cid, "node_id": f"IC_{cid}", "body": body,
                        "user": _user(login, 3), "author_association": "MEMBER",
                        "created_at": "2026-12-01T12:00:00Z",
                        "updated_at": "2026-12-01T12:00:00Z",
                        "url": f"{self.url}/repos/{self.state.repository}/issues/comments/"
                               f"{cid}",
                        "html_url": f"{issue['html_url']}#issuecomment-{cid}",
                        "issue_url": issue["url"], "performed_via_github_app": None,
                        "reactions": {"total_count": 0}},
            "repository": self.repo_json,
            "organization": {"login": self.state.repository.split("/")[0], "id": 2},
            "sender": _user(login, 3),
        }


# -- request handling ---------------------------------------------------------------------------

def _not_found() -> tuple[int, dict]:
    return 404, {"message": "Not Found", "documentation_url": DOCS, "status": "404"}


def _api_handler(double: GitHubDouble):
    st = double.state
    repo_prefix = f"/repos/{st.repository}"

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):  # quiet
            pass

        def _send(self, status: int, body, headers: dict | None = None) -> None:
            data = b"" if body is None else json.dumps(body).encode()
            self.send_response(status)
            if body is not None:
                self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("X-GitHub-Api-Version-Selected", "2022-11-28")
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)

        def _authorised(self) -> bool:
            auth = self.headers.get("Authorization")
            return auth in (f"token {st.token}", f"Bearer {st.token}")

        def _page(self, items: list, query: dict) -> tuple[list, dict]:
            per_page = max(1, min(100, int(query.get("per_page", ["30"])[0])))
            page = max(1, int(query.get("page", ["1"])[0]))
            chunk = items[(page - 1) * per_page: page * per_page]
            last = max(1, -(-len(items) // per_page))
            links = []
            base = f"{double.url}{urlsplit(self.path).path}?per_page={per_page}"
            if page < last:
                links.append(f'<{base}&page={page + 1}>; rel="next"')
                links.append(f'<{base}&page={last}>; rel="last"')
            if page > 1:
                links.append(f'<{base}&page=1>; rel="first"')
                links.append(f'<{base}&page={page - 1}>; rel="prev"')
            return chunk, ({"Link": ", ".join(links)} if links else {})

        def _body(self) -> dict:
            n = int(self.headers.get("Content-Length") or 0)
            try:
                data = json.loads(self.rfile.read(n) or b"{}")
            except ValueError:
                data = None
            return data if isinstance(data, dict) else {}

        def _route(self, method: str):
            parts = urlsplit(self.path)
            query = parse_qs(parts.query)
            path = parts.path
            with double.lock:
                st.log.append((method, self.path, self.headers.get("Authorization")))
            if not self._authorised():
                return 401, {"message": "Bad credentials", "documentation_url": DOCS}, {}
            if not path.startswith(repo_prefix + "/"):
                return (*_not_found(), {})
            rest = path[len(repo_prefix):]
            if method == "GET":
                return self._get(rest, query)
            if method == "POST" and (m := re.fullmatch(r"/issues/(\d+)/comments", rest)):
                number = int(m[1])
                body = self._body().get("body")
                if number not in st.issues:
                    return (*_not_found(), {})
                if not isinstance(body, str) or not body:
                    return 422, {"message": "Validation Failed", "errors": [
                        {"resource": "IssueComment", "code": "missing_field", "field": "body"}],
                        "documentation_url": DOCS}, {}
                if len(body) > 65536:
                    return 422, {"message": "Validation Failed", "errors": [
                        {"resource": "IssueComment", "code": "custom", "field": "body",
                         "message": "body is too long (maximum is 65536 characters)"}]}, {}
                cid = double._id()
                issue = st.issues[number]
                note = {"id": cid, "node_id": f"IC_{cid}", "body": body,
                        "user": {"login": "github-actions[bot]", "id": 41898282,
                                 "type": "Bot"},
                        "url": f"{double.url}{repo_prefix}/issues/comments/{cid}",
                        "html_url": f"{issue['html_url']}#issuecomment-{cid}",
                        "issue_url": issue["url"], "created_at": "2026-12-01T12:00:01Z",
                        "updated_at": "2026-12-01T12:00:01Z", "author_association": "NONE",
                        "edits": 0}
                with double.lock:
                    st.comments[cid] = note
                return 201, note, {"Location": note["url"]}
            if method == "PATCH" and (m := re.fullmatch(r"/issues/comments/(\d+)", rest)):
                note = st.comments.get(int(m[1]))
                body = self._body().get("body")
                if note is None:
                    return (*_not_found(), {})
                if not isinstance(body, str) or len(body) > 65536:
                    return 422, {"message": "Validation Failed", "documentation_url": DOCS}, {}
                with double.lock:
                    note.update(body=body, updated_at="2026-12-01T12:05:00Z",
                                edits=note["edits"] + 1)
                return 200, note, {}
            return (*_not_found(), {})

        def _get(self, rest: str, query: dict):
            if m := re.fullmatch(r"/issues/(\d+)", rest):
                issue = st.issues.get(int(m[1]))
                return (200, issue, {}) if issue else (*_not_found(), {})
            if m := re.fullmatch(r"/pulls/(\d+)", rest):
                pull = st.pulls.get(int(m[1]))
                return (200, pull, {}) if pull else (*_not_found(), {})
            if m := re.fullmatch(r"/pulls/(\d+)/commits", rest):
                if int(m[1]) not in st.pulls:
                    return (*_not_found(), {})
                items, links = self._page(st.commits[int(m[1])][:250], query)
                return 200, items, links
            if m := re.fullmatch(r"/issues/(\d+)/timeline", rest):
                if int(m[1]) not in st.issues:
                    return (*_not_found(), {})
                items, links = self._page(st.timelines.get(int(m[1]), []), query)
                return 200, items, links
            if m := re.fullmatch(r"/collaborators/([A-Za-z0-9-]+(?:\[bot\])?)/permission", rest):
                role = st.permissions.get(m[1], "none")
                # `permission` is the legacy level (maintain reads as write, triage as read);
                # `role_name` is the role itself
                legacy = {"triage": "read", "maintain": "write"}.get(role, role)
                return 200, {"permission": legacy, "role_name": role,
                             "user": {**_user(m[1], 3), "permissions": {}}}, {}
            if m := re.fullmatch(r"/actions/runs/(\d+)", rest):
                run = st.runs.get(int(m[1]))
                return (200, run, {}) if run else (*_not_found(), {})
            if m := re.fullmatch(r"/actions/workflows/([^/]+)/runs", rest):
                wanted = m[1]
                found = [r for r in st.runs.values() if r["path"].rsplit("/", 1)[-1] == wanted]
                for key in ("event", "status", "head_sha", "branch"):
                    if key in query:
                        field_ = "head_branch" if key == "branch" else key
                        found = [r for r in found if r[field_] == query[key][0]]
                found.sort(key=lambda r: r["created_at"], reverse=True)
                items, links = self._page(found, query)
                return 200, {"total_count": len(found), "workflow_runs": items}, links
            if m := re.fullmatch(r"/actions/runs/(\d+)/artifacts", rest):
                if int(m[1]) not in st.runs:
                    return (*_not_found(), {})
                arts = st.artifacts.get(int(m[1]), [])
                if "name" in query:
                    arts = [a for a in arts if a["name"] == query["name"][0]]
                items, links = self._page(arts, query)
                return 200, {"total_count": len(arts), "artifacts": items}, links
            if m := re.fullmatch(r"/actions/artifacts/(\d+)/(zip|[a-z0-9]+)", rest):
                art = next((a for arts in st.artifacts.values() for a in arts
                            if a["id"] == int(m[1])), None)
                if art is None or m[2] != "zip":
                    return (*_not_found(), {})
                if art["expired"] or art["id"] in st.gone:
                    return 410, {"message": "Artifact has expired", "documentation_url": DOCS,
                                 "status": "410"}, {}
                sig = secrets.token_hex(8)
                return 302, None, {"Location": f"{double.storage_url}/blob/{art['id']}.zip"
                                               f"?sv=2026-01-01&sig={sig}"}
            return (*_not_found(), {})

        def do_GET(self):
            self._send(*self._route("GET"))

        def do_POST(self):
            self._send(*self._route("POST"))

        def do_PATCH(self):
            self._send(*self._route("PATCH"))

    return Handler


def _storage_handler(double: GitHubDouble):
    st = double.state

    class Storage(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def do_GET(self):
            auth = self.headers.get("Authorization")
            with double.lock:
                st.storage_log.append((self.path, auth))
            m = re.fullmatch(r"/blob/(\d+)\.zip", urlsplit(self.path).path)
            data = st.blobs.get(int(m[1])) if m else None
            if auth is None and m and int(m[1]) in st.streams:
                self._stream(int(m[1]))
                return
            if auth is not None:  # a signed URL: credentials of another service are refused
                status, body, ctype = 400, b"<Error><Code>InvalidAuthenticationInfo</Code>" \
                                            b"</Error>", "application/xml"
            elif data is None:
                status, body, ctype = 404, b"<Error><Code>BlobNotFound</Code></Error>", \
                    "application/xml"
            else:
                status, body, ctype = 200, data, "application/zip"
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            try:
                self.wfile.write(body)
                if m and status == 200:
                    st.sent[int(m[1])] = len(body)
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True

        def _stream(self, art_id: int) -> None:
            """The chunks of a streamed artifact, until they end or the client hangs up."""
            self.send_response(200)
            self.send_header("Content-Type", "application/zip")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            st.sent[art_id] = 0
            try:
                for chunk in st.streams[art_id]():
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    st.sent[art_id] += len(chunk)
                self.wfile.write(b"0\r\n\r\n")
            except (BrokenPipeError, ConnectionResetError):
                pass
            self.close_connection = True

    return Storage
