"""Matrix rows run as jobs on an executor, each collected into a manifest (with reruns of the
points a previous manifest lacks): the core below ``infersweep sweep run`` and ``infersweep
launch``."""
