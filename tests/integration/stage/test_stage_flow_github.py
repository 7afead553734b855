"""The ghapi client wrapper against the GitHub API double: pagination of plain and wrapped
lists, errors with their status, and the artifact download's redirect without the token."""

from __future__ import annotations

import io
import socket
import zipfile

import pytest

from infersweep.stage.github import GitHub, GitHubError
from tests.ghdouble import GitHubDouble

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def double():
    with GitHubDouble() as gh:
        commits = [f"{i:040x}" for i in range(230)]
        gh.add_pull(3, head_sha=commits[-1], commits=commits, labels=["full-sweep-enabled"],
                    label_events=[("labeled", "full-sweep-enabled", "2026-11-30T09:00:00Z")])
        gh.add_comment_events(3, 205)
        gh.add_run(77, head_sha=commits[-1], created_at="2026-12-01T10:00:00Z")
        for i in range(7):
            gh.add_run(100 + i, head_sha=commits[-1], created_at=f"2026-12-01T1{i}:30:00Z")
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as zf:
            zf.writestr("a.json", "{}")
        for i in range(203):
            gh.add_artifact(77, f"art-{i}", buf.getvalue())
        gh.state.permissions.update(maya="maintain", tom="triage")
        yield gh


@pytest.fixture(scope="module")
def api(double):
    return GitHub(double.state.repository, "test-token", double.url)


def test_plain_lists_follow_the_link_header_to_the_end(api, double):
    assert len(api.pull_commits(3)) == 230          # pages of 100: 100, 100, 30
    timeline = api.timeline(3)
    assert len(timeline) == 206 and timeline[-1]["event"] == "labeled"


def test_wrapped_lists_stop_at_total_count(api, double):
    before = len(double.state.log)
    arts = api.artifacts(77)
    assert len(arts) == 203 and len({a["id"] for a in arts}) == 203
    assert len(double.state.log) - before == 3      # never a fourth, empty page
    runs = api.workflow_runs("run-sweep.yml", event="pull_request", status="completed")
    assert [r["id"] for r in runs][:2] == [106, 105] and len(runs) == 8


def test_permission_is_the_legacy_level(api):
    assert api.permission("maya") == "write"         # maintain reads as write
    assert api.permission("tom") == "read"
    assert api.permission("nobody") == "none"


def test_errors_carry_the_status(api, double):
    with pytest.raises(GitHubError) as err:
        api.run(999)
    assert err.value.status == 404 and "Not Found" in str(err.value)
    bad = GitHub(double.state.repository, "wrong-token", double.url)
    with pytest.raises(GitHubError) as err:
        bad.pull(3)
    assert err.value.status == 401 and "Bad credentials" in str(err.value)


def test_the_download_follows_the_redirect_without_the_token(api, double):
    art = double.state.artifacts[77][0]
    data = api.download_artifact(art["id"], art["name"])
    assert zipfile.ZipFile(io.BytesIO(data)).namelist() == ["a.json"]
    assert double.state.storage_log[-1][1] is None
    double.state.gone.add(art["id"])
    with pytest.raises(GitHubError) as err:
        api.download_artifact(art["id"], art["name"])
    assert err.value.status == 410


def test_no_server_is_an_error_without_a_status():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(GitHubError) as err:
        GitHub("o/r", "t", f"http://127.0.0.1:{port}").pull(1)
    assert err.value.status is None and "no answer" in str(err.value)
