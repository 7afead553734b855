"""Fixtures for tests against the real local Slurm (scripts/slurm-local-cluster) and the real
srtctl (upstream srt-slurm, cloned from the reference bundle as a pinned remote).

Reusable by launcher tests: `local_slurm` (the running cluster and a `submit` helper that
cancels what it submitted), `srt_slurm_remote` (a bare git remote holding upstream history),
`srtctl` (an installed srtctl root ready for `srtctl apply --json` on this Slurm, with the test
doubles for what a real cluster provides: Pyxis, `make setup`'s binaries, a GPU engine).

Where something the real chain needs is absent the fixtures skip and say what; with
INFERSWEEP_REQUIRE_SLURM=1 (set by .ci/run) they fail instead, so CI never skips them.
"""

from __future__ import annotations

import os
import sys
import time
import warnings

import pytest

from tests.conftest import shared_absent
from tests.integration.slurm import srtctl_setup
from tests.integration.slurm.localslurm import cluster_or_reason


def _absent(reason: str):
    if os.environ.get("INFERSWEEP_REQUIRE_SLURM") == "1":
        pytest.fail(f"{reason} (INFERSWEEP_REQUIRE_SLURM=1: CI must provide it)")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def local_slurm():
    """The running local cluster; every job a test submits through it is cancelled by id at
    the end of the session if still there."""
    cluster, reason = cluster_or_reason()
    if cluster is None:
        _absent(reason)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SLURM_CONF", str(cluster.conf))
        yield cluster
        cluster.cancel_submitted()


@pytest.fixture(scope="session")
def srt_slurm_remote(tmp_path_factory):
    """A bare repository standing in for the pinned srt-slurm remote (full upstream history)."""
    bundle = srtctl_setup.BUNDLE
    if not bundle.is_file():
        shared_absent(f"upstream srt-slurm bundle not present ({bundle.name} under "
                      "../shared/reference)")
    return srtctl_setup.make_remote(tmp_path_factory.mktemp("srt-slurm-remote"))


@pytest.fixture(scope="session")
def srtctl(local_slurm, srt_slurm_remote, tmp_path_factory):
    """Upstream srtctl at the pinned commit, installed (editable) into its own venv, set up
    for this Slurm. See srtctl_setup.Srtctl for what it provides."""
    missing = srtctl_setup.missing_prerequisites()
    if missing:
        _absent("the real srtctl cannot run here: " + "; ".join(missing))
    s = srtctl_setup.install(srt_slurm_remote, tmp_path_factory.mktemp("srtctl"), local_slurm)
    if s.python312 is None:
        warnings.warn(f"{s.uv_note}: the job runs srtctl on Python "
                      f"{sys.version_info.major}.{sys.version_info.minor}, not 3.12", stacklevel=1)
    return s


def wait_until(predicate, timeout: float, what: str, interval: float = 0.5):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")

