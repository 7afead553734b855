"""``infersweep launch``, the CI entry point: one matrix row on the runner's fleet (its
identity, deadline and agentic inputs); the rows' runner and executors are
:mod:`infersweep.rowjobs`."""
