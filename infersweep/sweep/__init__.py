"""``infersweep sweep run``: expand the matrix, run every row on an executor, show every point."""
