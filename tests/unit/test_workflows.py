"""The GitHub workflows: lint-clean, secure, thin, and consuming every matrix bucket."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from infersweep.changelog import buckets

REPO = Path(__file__).resolve().parents[2]
WORKFLOWS = REPO / ".github" / "workflows"
BIN = Path(sys.executable).parent


def _tool(name: str) -> str:
    path = BIN / name
    if path.exists():
        return str(path)
    found = shutil.which(name)
    assert found, f"{name} is a test dependency (pip install -e '.[test]')"
    return found


def _load(name: str) -> dict:
    return yaml.load((WORKFLOWS / name).read_text(), Loader=yaml.BaseLoader)


def test_actionlint_clean():
    proc = subprocess.run([_tool("actionlint"), *sorted(map(str, WORKFLOWS.glob("*.yml")))],
                          capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_zizmor_clean():
    proc = subprocess.run([_tool("zizmor"), "--offline", "--no-progress", str(WORKFLOWS)],
                          capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "No findings" in proc.stdout + proc.stderr


def _consumed_outputs(workflow: dict) -> set[str]:
    used = set()
    for job in workflow["jobs"].values():
        matrix = job.get("strategy", {}).get("matrix", {})
        for value in matrix.values() if isinstance(matrix, dict) else []:
            used.update(re.findall(r"fromJSON\(needs\.setup\.outputs\.([\w-]+)\)", value))
    return used


def test_every_job_output_has_a_consuming_job():
    sweep = _load("run-sweep.yml")
    consumed = _consumed_outputs(sweep)
    declared = set(sweep["jobs"]["setup"]["outputs"])
    for name in buckets.JOB_OUTPUTS:
        assert name in declared, f"setup does not export '{name}'"
        assert name in consumed, f"no job consumes bucket output '{name}'"
        assert f"has-{name}" in declared


@pytest.mark.parametrize("family", ["1k1k", "8k1k", "2048_128", "agentic"])
def test_every_bucket_routes_to_a_consumed_output(family):
    consumed = _consumed_outputs(_load("run-sweep.yml"))
    for side in ("single_node", "multi_node"):
        assert buckets.job_output_for(side, family) in consumed
    for name in buckets.EVAL_BUCKETS:
        assert buckets.job_output_for(name) in consumed


def test_an_unusual_sequence_family_reaches_a_job():
    row = {"isl": 2048, "osl": 128, "conc": 4, "runner": "x", "framework": "y"}
    matrix = buckets.build([row], [], {})
    assert matrix["single_node"] == {"2048_128": [row]}
    assert buckets.job_outputs(matrix)["single-node"] == [row]


ALLOWED_RUN = re.compile(r"^(infersweep |pip install |bash \"runners/launch_|sudo bash \.ci/run)")


def test_steps_are_thin_and_never_interpolate():
    for path in WORKFLOWS.glob("*.yml"):
        workflow = yaml.load(path.read_text(), Loader=yaml.BaseLoader)
        for job_name, job in workflow["jobs"].items():
            for step in job.get("steps", []):
                script = step.get("run")
                if script is None:
                    continue
                assert "${{" not in script, f"{path.name}:{job_name} interpolates into run:"
                assert ALLOWED_RUN.match(script.strip()), (
                    f"{path.name}:{job_name} runs '{script.strip()}': decisions belong in "
                    "infersweep commands")


def test_sweep_triggers_only_on_the_changelog():
    on = _load("run-sweep.yml")["on"]
    assert on["pull_request"]["paths"] == ["perf-changelog.yaml"]
    assert on["push"]["paths"] == ["perf-changelog.yaml"]


def test_templates_run_the_fleet_launcher():
    for name in ("benchmark-single-node.yml", "benchmark-multinode.yml"):
        steps = _load(name)["jobs"]["benchmark"]["steps"]
        assert any(s.get("run", "").startswith('bash "runners/launch_${RUNNER_NAME%%_*}.sh"')
                   for s in steps)


def test_concurrency_label_list_is_the_policy_vocabulary():
    """The workflow's only copy of label names equals the policy module's (its source)."""
    from infersweep.policy import labels

    group = _load("run-sweep.yml")["concurrency"]["group"]
    copied = json.loads(re.search(r"fromJSON\('(\[.*?\])'\)", group)[1])
    assert sorted(copied) == sorted(labels.SWEEP_LABELS)
