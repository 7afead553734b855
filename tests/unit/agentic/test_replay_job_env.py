"""What a replay in a job folder gets from its environment: a TMPDIR short enough for the
client's unix sockets (at most 107 bytes of path; a deep one, act's job folder or a runner's,
is replaced by a short fresh folder), and the repository whose lock pins the client."""

from __future__ import annotations

import os

from infersweep.agentic import replay


def test_a_deep_tmpdir_is_replaced_for_the_client_and_a_short_one_kept(tmp_path):
    deep = tmp_path / ("d" * 60)
    deep.mkdir()
    made = replay.short_tmpdir({"TMPDIR": str(deep)})
    try:
        assert made is not None and os.path.isdir(made)
        assert len(made) <= replay.MAX_CLIENT_TMPDIR
        # the longest socket the client opens there fits a unix socket path
        assert len(f"{made}/tmpabcdefgh/aiperf/credit_return_push_pull.ipc") < 108
    finally:
        os.rmdir(made)
    assert replay.short_tmpdir({"TMPDIR": "/t"}) is None


def test_a_job_folder_finds_the_clients_pin_through_the_launching_repository(
        tmp_path, monkeypatch):
    """A local job's replay runs in its job folder with an infersweep that may be installed
    (a workflow's `pip install .`), not a checkout: the pin is read from the repository the
    executor names, before the working directory and the package's parent."""
    from infersweep.agentic import client
    from infersweep.pins.lock import LOCK_PATH

    repo = tmp_path / "repo"
    (repo / LOCK_PATH).parent.mkdir(parents=True)
    (repo / LOCK_PATH).write_text("")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(client.ROOT_ENV, str(repo))
    assert client.default_root() == repo
    monkeypatch.setenv(client.ROOT_ENV, str(tmp_path / "elsewhere"))
    assert client.default_root() != tmp_path / "elsewhere"  # a folder without a lock: skipped
