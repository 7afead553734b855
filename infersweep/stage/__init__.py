"""Staging a finished sweep: the results store, the report built from it, and `/stage-results`."""
