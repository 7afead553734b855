"""Label policy: PR labels and the GitHub event decide whether and how a sweep runs.

The label names live in :mod:`infersweep.policy.labels` and nowhere else.
"""
