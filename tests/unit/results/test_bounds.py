"""The bounds docs/results.md states are the ones the check enforces, and honest numbers sit
far inside them."""

from __future__ import annotations

from infersweep.results import bounds
from tests.conftest import REPO


def test_the_docs_hold_the_table_of_bounds_the_code_enforces():
    assert bounds.markdown() in (REPO / "docs" / "results.md").read_text()


def test_the_bounds_follow_from_their_reasons():
    assert bounds.TOKENS_PER_GPU.limit == bounds.PEAK_FLOPS_PER_GPU / (
        2 * bounds.MIN_ACTIVE_PARAMS) == 25_000_000
    assert bounds.TOKENS_PER_GPU.shown == "25,000,000 tok/s/GPU"
    assert bounds.MIN_SECONDS_PER_TOKEN == 5e-5 and bounds.TIME_PER_TOKEN.shown == "0.05 ms"
    assert 1000 / bounds.TIME_PER_TOKEN.limit == 20_000  # the interactivity it allows
    assert bounds.TOLERANCE == 0.01
