"""The replay client's TMPDIR: its unix sockets (at most 107 bytes of path) live there, so a
deep one (act's job folder, a runner's) is replaced for the client by a short fresh folder."""

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
