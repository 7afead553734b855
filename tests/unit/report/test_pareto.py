from __future__ import annotations

from infersweep.report.pareto import frontier


def _p(x, y, **kw):
    return {"median_intvty": x, "tput_per_gpu": y, "successful": True, **kw}


def test_the_frontier_keeps_only_points_nobody_beats_on_both_axes():
    pts = [_p(10, 100, n="a"), _p(20, 90, n="b"), _p(15, 80, n="dominated by b"),
           _p(30, 40, n="c"), _p(5, 100, n="dominated by a (same y, less x)"), _p(30, 10)]
    assert [p.get("n") for p in frontier(pts)] == ["a", "b", "c"]


def test_ties_keep_the_first_and_incomplete_points_never_count():
    first, second = _p(10, 10, n=1), _p(10, 10, n=2)
    unsuccessful = _p(100, 100, successful=False)
    no_number = {"median_intvty": None, "tput_per_gpu": 500, "successful": True}
    assert frontier([first, second, unsuccessful, no_number]) == [first]
    assert frontier([]) == []


def test_numbers_as_a_database_returns_them_count():
    from decimal import Decimal

    a = {"median_intvty": Decimal("12.5"), "tput_per_gpu": 900, "successful": 1}
    b = {"median_intvty": 10, "tput_per_gpu": Decimal("800.0"), "successful": 1}
    nan = {"median_intvty": float("nan"), "tput_per_gpu": 1e9, "successful": 1}
    assert frontier([a, b, nan]) == [a]
