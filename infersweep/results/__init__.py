"""Results: a finished job's files become rows (process), a run's rows one aggregate
(collect), the aggregate a staging verdict (check) and two runs a comparison (compare)."""
