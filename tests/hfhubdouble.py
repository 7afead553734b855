"""A test double of the Hugging Face Hub's HTTP API: just what a dataset download uses.

``huggingface_hub`` (pointed at it with ``endpoint=`` / ``HF_ENDPOINT``) resolves a revision
(``GET /api/datasets/{repo}/revision/{rev}``), lists the commit's files
(``GET /api/datasets/{repo}/tree/{sha}``), then reads each file's metadata and content
(``HEAD``/``GET /datasets/{repo}/resolve/{sha}/{path}``, answering ``X-Repo-Commit``,
``ETag`` and ``Content-Length``). Unknown repositories and revisions get the Hub's 404 with
``X-Error-Code: RepoNotFound`` / ``RevisionNotFound``, which the library turns into its
named errors. Every request is recorded in :attr:`HubDouble.requests`.
"""

from __future__ import annotations

import hashlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote, urlsplit


class HubDouble:
    def __init__(self):
        self.repos: dict[str, dict] = {}  # repo id -> {"refs": {name: sha}, "commits": {...}}
        self.requests: list[tuple[str, str]] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def add_commit(self, repo: str, files: dict[str, bytes], ref: str = "main") -> str:
        """A commit of ``files`` that ``ref`` now points at; its sha."""
        digest = hashlib.sha1(repr(sorted(files.items())).encode() + repo.encode())
        entry = self.repos.setdefault(repo, {"refs": {}, "commits": {}})
        sha = digest.hexdigest()
        entry["commits"][sha] = dict(files)
        entry["refs"][ref] = sha
        return sha

    def __enter__(self) -> HubDouble:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _resolve(self, repo: str, rev: str) -> tuple[int, str, str | None]:
        entry = self.repos.get(repo)
        if entry is None:
            return 404, "RepoNotFound", None
        sha = entry["refs"].get(rev, rev if rev in entry["commits"] else None)
        if sha is None:
            return 404, "RevisionNotFound", None
        return 200, "", sha

    def _handler(self):
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _send(self, status, body=b"", headers=None, error=""):
                self.send_response(status)
                headers = dict(headers or {})
                if error:
                    headers["X-Error-Code"] = error
                    headers["Content-Type"] = "application/json"
                    body = json.dumps({"error": error}).encode()
                headers.setdefault("Content-Length", str(len(body)))
                for k, v in headers.items():
                    self.send_header(k, v)
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)

            def _route(self):
                path = unquote(urlsplit(self.path).path)
                hub.requests.append((self.command, path))
                parts = path.strip("/").split("/")
                if parts[:2] == ["api", "datasets"] and len(parts) >= 6:
                    repo, what, rev = "/".join(parts[2:4]), parts[4], parts[5]
                    status, error, sha = hub._resolve(repo, rev)
                    if sha is None:
                        return self._send(status, error=error)
                    files = hub.repos[repo]["commits"][sha]
                    if what == "revision":
                        body = {"id": repo, "sha": sha, "private": False, "disabled": False,
                                "gated": False, "siblings": [{"rfilename": f} for f in files]}
                    elif what == "tree":
                        body = [{"type": "file", "path": f, "size": len(data),
                                 "oid": hashlib.sha1(data).hexdigest()}
                                for f, data in sorted(files.items())]
                    else:
                        return self._send(404, error="EntryNotFound")
                    return self._send(200, json.dumps(body).encode(),
                                      {"Content-Type": "application/json"})
                if parts[:1] == ["datasets"] and len(parts) >= 6 and parts[3] == "resolve":
                    repo, rev, name = "/".join(parts[1:3]), parts[4], "/".join(parts[5:])
                    status, error, sha = hub._resolve(repo, rev)
                    if sha is None:
                        return self._send(status, error=error)
                    data = hub.repos[repo]["commits"][sha].get(name)
                    if data is None:
                        return self._send(404, error="EntryNotFound")
                    return self._send(200, data, {
                        "X-Repo-Commit": sha, "ETag": f'"{hashlib.sha1(data).hexdigest()}"',
                        "Content-Type": "application/octet-stream"})
                return self._send(404, error="EntryNotFound")

            do_GET = do_HEAD = _route

        return Handler
