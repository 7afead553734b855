"""Every job of stage-results.yml has a timeout: a hung download or database stops long
before GitHub's six hours."""

from __future__ import annotations

from pathlib import Path

import yaml

WORKFLOW = Path(__file__).resolve().parents[3] / ".github" / "workflows" / "stage-results.yml"


def test_every_job_of_stage_results_has_a_timeout():
    jobs = yaml.safe_load(WORKFLOW.read_text())["jobs"]
    assert jobs
    for name, job in jobs.items():
        assert 0 < int(job.get("timeout-minutes", 0)) <= 60, name
