"""The guard that keeps tests off the live catalog and changelog (tests/livecatalog.py)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import REPO
from tests.livecatalog import frozen_checkout

LIVE = REPO / "configs" / "amd-master.yaml"


def test_reading_the_live_catalog_is_refused():
    with pytest.raises(RuntimeError, match=r"live catalog or changelog .*tests/data/catalog"):
        LIVE.read_text()
    with pytest.raises(RuntimeError, match="live catalog or changelog"):
        (REPO / "perf-changelog.yaml").open().close()


def test_handing_its_path_to_a_subprocess_is_refused():
    with pytest.raises(RuntimeError, match="live catalog or changelog"):
        subprocess.run([sys.executable, "-c", "pass", f"--config-files={LIVE}"], check=False)
    # a relative name may be meant for another folder (git -C, a scratch clone)
    subprocess.run([sys.executable, "-c", "pass", "configs/amd-master.yaml"], check=True)


def test_other_files_and_the_frozen_copies_are_read():
    assert (REPO / "configs" / "fleets.yaml").read_text()
    frozen = frozen_checkout()
    assert (frozen / "configs" / "amd-master.yaml").read_text() == (
        REPO / "tests" / "data" / "catalog" / "amd-master.yaml").read_text()
    assert (frozen / "configs" / "fleets.yaml").resolve() == REPO / "configs" / "fleets.yaml"


@pytest.mark.live_catalog
def test_a_test_marked_for_the_live_files_reads_them():
    assert "dsv4-fp4-mi355x-atom-disagg" in LIVE.read_text()
