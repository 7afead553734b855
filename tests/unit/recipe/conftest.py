"""Rows of the catalog's first workload, expanded by the real matrix code."""

from __future__ import annotations

import pytest

from infersweep.config.catalog import load_catalog
from infersweep.matrix.generate import Selection, generate_keyed
from tests.conftest import FROZEN_MASTER, FROZEN_RUNNERS, REPO, SHARED

KEY = "dsv4-fp4-mi355x-atom-disagg"
REFERENCE = SHARED / "reference" / "srt-slurm-recipes"
TEMPLATES = REPO / "benchmarks" / "multi_node" / "srt-slurm" / "atom" / "deepseek-v4" / "mi355x"


@pytest.fixture(scope="session")
def dsv4_rows() -> list[dict]:
    catalog = load_catalog([FROZEN_MASTER],
                           FROZEN_RUNNERS, strict_runners=False)
    return [row for _, row in generate_keyed(catalog, Selection(config_keys=[KEY],
                                                                evals="none"))]


@pytest.fixture
def reference() -> object:
    """The older hand-written recipes; tests using them skip where they are absent."""
    if not (REFERENCE / "atom_deepseek-v4_mi355x_disagg-1p1d-tp8-8k1k.yaml").is_file():
        pytest.skip("reference recipes (../shared/reference/srt-slurm-recipes) not present")
    return REFERENCE
