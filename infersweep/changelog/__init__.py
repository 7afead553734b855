"""The perf changelog: the append-only gate and the changelog-driven sweep matrix."""
