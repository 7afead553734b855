"""Upstream srt-slurm v1.0.68 (cloned from the reference bundle) with its srtctl installed the
way `recipe coverage --srtctl` installs it: into the checkout's own .venv."""

from __future__ import annotations

import time

import pytest

from infersweep.recipe import srtctl
from tests.conftest import INFERENCEX, shared_absent
from tests.integration.slurm.srtctl_setup import BUNDLE, PIN, git

CONFIGS = INFERENCEX / "configs"
CATALOGS = [CONFIGS / "nvidia-master.yaml", CONFIGS / "amd-master.yaml"]
RUNNERS = CONFIGS / "runners.yaml"


@pytest.fixture(scope="session")
def upstream_checkout(tmp_path_factory):
    if not BUNDLE.is_file():
        shared_absent(f"upstream srt-slurm bundle not present ({BUNDLE.name} under "
                      "../shared/reference)")
    if not all(p.is_file() for p in [*CATALOGS, RUNNERS]):
        shared_absent("InferenceX reference data (../shared/reference/inferencex) not present")
    root = tmp_path_factory.mktemp("upstream") / "srt-slurm"
    git("clone", "-q", "--no-checkout", str(BUNDLE), str(root))
    git("-c", "advice.detachedHead=false", "checkout", "-q", "--detach", PIN, cwd=root)
    return root


@pytest.fixture(scope="session")
def upstream_srtctl(upstream_checkout):
    """srtctl of the checkout, installed by `srtctl.locate` (pip, about 40 s)."""
    t0 = time.monotonic()
    found = srtctl.locate(upstream_checkout, say=lambda text: None)
    print(f"srtctl installed into {found.exe.parent} in {time.monotonic() - t0:.1f} s")
    return found
