"""A point's two charted numbers as the report reads them (the frontiers themselves are the
pages' scripts': tests/unit/report/test_points_js.py and test_explorer_js.py)."""

from __future__ import annotations

from decimal import Decimal

from infersweep.report.pareto import number, plottable


def _p(x, y, **kw):
    return {"median_intvty": x, "tput_per_gpu": y, "successful": True, **kw}


def test_numbers_as_a_database_returns_them_count_and_nothing_else_does():
    assert number(Decimal("12.5")) == 12.5 and number(10) == 10.0
    for bad in (None, True, "12", float("nan"), float("inf"), [1]):
        assert number(bad) is None, bad


def test_a_plottable_point_is_complete_with_both_numbers():
    assert plottable(_p(Decimal("12.5"), 900, successful=1))
    assert plottable({"median_intvty": 1.0, "tput_per_gpu": 2.0})  # no flag: complete
    assert not plottable(_p(100, 100, successful=False))
    assert not plottable(_p(None, 500)) and not plottable(_p(float("nan"), 1e9))
