"""`--eval-hang-rate`: stalls only answers from the key, seeded, near its rate."""

from __future__ import annotations

from infersweep.sim.faults import FaultConfig, eval_stall


def test_eval_stalls_are_seeded_and_near_rate():
    cfg = FaultConfig(eval_hang_rate=0.1, seed=3)
    stalls = [eval_stall(cfg, i) is not None for i in range(2000)]
    assert stalls == [eval_stall(cfg, i) is not None for i in range(2000)]
    assert 0.07 < sum(stalls) / 2000 < 0.13
    assert all(eval_stall(cfg, i).kind == "hang" for i in range(2000) if stalls[i])


def test_no_eval_stall_rate_no_stall_and_no_other_fault():
    cfg = FaultConfig()
    assert all(eval_stall(cfg, i) is None for i in range(500))
    assert not FaultConfig(eval_hang_rate=0.5).any  # benchmark requests are never affected
