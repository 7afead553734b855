"""Pinned runtime sources: ``configs/runtimes.yaml`` is the one place a commit is pinned.

:mod:`~infersweep.pins.lock` loads it, :mod:`~infersweep.pins.check` finds drifting copies
in the repository, :mod:`~infersweep.pins.verify` proves each commit is fetchable.
"""
