"""Run folders for the results-store tests, laid out as `sweep run` writes them and turned
into rows by the real results processing (tests/resultsrun.py builds the files)."""

from __future__ import annotations

from pathlib import Path

from tests import resultsrun

DISAGG = "dsv4-fp4-mi355x-atom-disagg"
SINGLE = "gptoss-fp4-h200-vllm"
ONE = "mi355x-atom-dsv4-disagg-1p1d-tp8-8k1k"
TP4 = "h200-vllm-gptoss-tp4-1k1k"


def sweep_folder(root: Path, *, run_id: str = "local-1", attempt: int = 1,
                 disagg_concs=(4, 8, 16), single_concs=(1, 2), throughput: float = 24000.0,
                 single: bool = True) -> Path:
    """A two-config run (a disaggregated 1P1D job and a single-node TP4 job)."""
    results = {c: resultsrun.result(c, c, total_token_throughput=throughput)
               for c in disagg_concs}
    resultsrun.write_job(root, resultsrun.disagg_row(disagg_concs), config_key=DISAGG,
                         name=ONE, run_id=run_id, attempt=attempt, results=results)
    if single:
        resultsrun.write_job(root, resultsrun.single_row(single_concs), config_key=SINGLE,
                             name=TP4, run_id=run_id, attempt=attempt)
    return root


def many_points_folder(root: Path, points: int, run_id: str = "local-big") -> Path:
    """``points`` points: jobs of ten concurrencies, twenty jobs per config."""
    concs = (4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048)
    left, j = points, 0
    while left > 0:
        take = concs[:min(len(concs), left)]
        left -= len(take)
        resultsrun.write_job(root, resultsrun.disagg_row(take), config_key=f"cfg-{j // 20:03d}",
                             name=f"recipe-{j:04d}", run_id=run_id)
        j += 1
    return root
