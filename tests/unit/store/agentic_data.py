"""Agentic job folders from the real replay exports (tests/data/agentic/exports) for the
store, staging and report tests: a scaled-down local result (what the exports are) and a
publishable one (the same exports with aiperf's submission marked valid and a row that
asked for the duration it ran), with and without KV offload."""

from __future__ import annotations

import json
from pathlib import Path

from infersweep.results import agenticagg
from tests.unit.agentic import agenticjob

OFFLOAD = {"kv-offloading": "dram", "kv-offload-backend": {"name": "lmcache"},
           "total-cpu-dram-gb": 1199}


def local_job(folder: Path, **row_extra) -> Path:
    """A scaled-down local result (never publishable); the result file."""
    return agenticjob.make(folder, matrix_row=agenticjob.row(**row_extra))


def publishable_job(folder: Path, **row_extra) -> Path:
    """A full-length result aiperf marked valid; the result file."""
    folder.mkdir(parents=True, exist_ok=True)
    r = agenticjob.row(duration=40.0, **row_extra)
    agenticjob.make(folder, matrix_row=r, scaled=None)
    agg = folder / "aiperf_artifacts" / "profile_export_aiperf.json"
    data = json.loads(agg.read_text())
    data["metadata"]["submission_valid"] = True
    data["metadata"]["submission_invalid_reasons"] = []
    agg.write_text(json.dumps(data))
    return agenticjob.reprocess(folder, r, scaled=None)


def entries(*folders: Path) -> list[dict]:
    """`results collect`'s agentic entries for the job folders."""
    from infersweep.agentic import gatepoints

    return agenticagg.entries(gatepoints.examine([str(f) for f in folders]))
