"""The artifact download against the GitHub API double: streamed into a file under a byte cap
(never read whole into memory first), whatever the listing and the headers say, and unpacked
only when the whole zip is safe; a refusal leaves nothing behind."""

from __future__ import annotations

import io
import itertools
import random
import zipfile

import pytest

from infersweep.stage import artifacts as arts
from infersweep.stage.github import GitHub, GitHubError, TooLarge
from tests.ghdouble import GitHubDouble

pytestmark = pytest.mark.integration

MiB = 1 << 20
RUN = 91


def _zip(members) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members:
            zf.writestr(name, data)
    return buf.getvalue()


@pytest.fixture
def double():
    with GitHubDouble() as gh:
        gh.add_run(RUN, head_sha="c3" * 20, created_at="2026-12-01T10:00:00Z")
        yield gh


@pytest.fixture
def api(double):
    return GitHub(double.state.repository, "test-token", double.url)


def _endless():
    """A download that never ends (a broken or hostile server): 1 MiB chunks forever."""
    return itertools.repeat(b"PK" + b"\0" * (MiB - 2))


def test_a_good_artifact_streams_to_a_file_and_unpacks(api, double, tmp_path):
    art = double.add_artifact(RUN, "results_bmk", _zip([("aggregate/results.json", b"{}")]))
    assert arts.download(api, art, tmp_path / "results_bmk") == ["aggregate/results.json"]
    assert (tmp_path / "results_bmk" / "aggregate" / "results.json").read_bytes() == b"{}"
    assert [p.name for p in tmp_path.iterdir()] == ["results_bmk"]  # no spool left
    assert double.state.storage_log[-1][1] is None  # blob storage never saw the token


def test_an_endless_download_under_a_small_listing_stops_at_the_cap(api, double, tmp_path):
    art = double.add_artifact(RUN, "results_bmk", b"", stream=_endless, size_in_bytes=2048)
    limits = arts.Limits(zip_bytes=8 * MiB)
    with pytest.raises(arts.UnsafeArchive) as err:
        arts.download(api, art, tmp_path / "results_bmk", limits)
    assert err.value.rule == arts.RULE_SIZE
    assert f"the download passed {8 * MiB} bytes, more than the limit of {8 * MiB}" \
        in err.value.message
    assert list(tmp_path.iterdir()) == []
    # the client hung up at the cap: what the server got out is the cap and socket buffers
    assert double.state.sent[art["id"]] < 64 * MiB


def test_a_content_length_above_the_cap_is_refused_before_reading(api, double, tmp_path):
    big = _zip([("results/blob.bin", random.Random(0).randbytes(4 * MiB))])  # incompressible
    art = double.add_artifact(RUN, "results_bmk", big, size_in_bytes=100)
    out = io.BytesIO()
    with pytest.raises(TooLarge, match=f"announces {len(big)} bytes"):
        api.download_artifact_to(art["id"], "results_bmk", out, MiB)
    assert out.getvalue() == b""
    with pytest.raises(arts.UnsafeArchive, match=r"\[stage-artifact-size\] the download "
                                                 f"announces {len(big)} bytes"):
        arts.download(api, art, tmp_path / "results_bmk", arts.Limits(zip_bytes=MiB))
    assert list(tmp_path.iterdir()) == []


def test_the_in_memory_download_is_capped_too(api, double):
    art = double.add_artifact(RUN, "changelog-metadata", b"", stream=_endless)
    with pytest.raises(TooLarge, match="passed 3145728 bytes"):
        api.download_artifact(art["id"], "changelog-metadata", max_bytes=3 * MiB)


def test_a_bomb_that_arrives_whole_is_refused_and_leaves_nothing(api, double, tmp_path):
    bomb = _zip([(f"results/{i}.bin", b"\0" * (2 * MiB)) for i in range(4)])
    art = double.add_artifact(RUN, "results_bmk", bomb)
    with pytest.raises(arts.UnsafeArchive) as err:
        arts.download(api, art, tmp_path / "results_bmk")
    assert err.value.rule == arts.RULE_RATIO and "member 'results/0.bin'" in err.value.message
    assert list(tmp_path.iterdir()) == []


def test_an_expired_artifact_is_a_410_and_leaves_nothing(api, double, tmp_path):
    art = double.add_artifact(RUN, "results_bmk", _zip([("a.json", b"{}")]), expired=True)
    with pytest.raises(GitHubError) as err:
        arts.download(api, art, tmp_path / "results_bmk")
    assert err.value.status == 410 and "expired" in str(err.value)
    assert list(tmp_path.iterdir()) == []


class _Redirector:
    """A server that answers every GET with a redirect: the API's ``/zip`` to ``first``,
    ``/hop`` (an http(s) blob URL that redirects again) to ``then``."""

    def __init__(self, first: str, then: str = ""):
        import http.server
        import threading

        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 - http.server's name
                self.send_response(302)
                self.send_header("Location", outer.then if self.path == "/hop" else
                                 outer.first.replace("HOP", f"{outer.url}/hop"))
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.first, self.then = first, then
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.mark.parametrize("first, then", [("file://{secret}", ""), ("HOP", "file://{secret}"),
                                         ("ftp://127.0.0.1/{secret}", "")])
def test_a_redirect_to_anything_but_http_is_not_followed(tmp_path, first, then):
    secret = tmp_path / "secret.zip"  # a local file that would unpack as an artifact
    secret.write_bytes(_zip([("aggregate/results.json", b"{}")]))
    server = _Redirector(first.format(secret=secret), then.format(secret=secret))
    try:
        api = GitHub("octo-org/infersweep", "test-token", server.url)
        with pytest.raises(GitHubError) as err:
            api.download_artifact(7, "results_bmk")
    finally:
        server.close()
    # (urllib itself refuses a file: URL on a second hop; the first is ours to check)
    assert ("not http(s), is not followed" in str(err.value)
            or "is not allowed" in str(err.value)), err.value
    assert not (tmp_path / "results_bmk").exists()
