"""Expansion of the config catalog into sweep-matrix rows (one row = one job)."""
