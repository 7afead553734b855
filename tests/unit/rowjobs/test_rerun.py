"""A later attempt with the previous manifest: only the points that are not present run; the
present ones are carried over; run id and attempt follow the previous attempt."""

from __future__ import annotations

import json

import pytest

from infersweep.progress import StatusLines
from infersweep.rowjobs import manifest as manifests
from infersweep.rowjobs.local import LocalExecutor
from infersweep.rowjobs.runner import RowRunner, load_previous, run_context
from tests.conftest import REPO
from tests.unit.recipe.conftest import KEY


class Lines:
    def __init__(self):
        self.text = ""

    def write(self, s):
        self.text += s

    def flush(self):
        pass

    def isatty(self):
        return False


@pytest.fixture
def pairs(dsv4_rows):
    return [(KEY, row) for row in dsv4_rows]


def _sweep(pairs, out, previous=(), display=None):
    return RowRunner(pairs, repo=REPO, executor=LocalExecutor(), out_dir=out, scale_down=10,
                 previous=previous, display=display or StatusLines(Lines()))


def _previous_attempt(tmp_path, pairs, present: dict[int, int]):
    """Manifests of an attempt whose 1P1D row wrote ``present`` (conc -> completed)."""
    first = _sweep(pairs, tmp_path / "a1")
    plan = first.plans[0]
    result_dir = plan.workdir / "logs" / "fixed-seq"
    result_dir.mkdir(parents=True)
    for p in plan.rendered.points:
        if p.conc in present:
            (result_dir / p.result_file).write_text(json.dumps(
                {"num_prompts": p.num_prompts, "max_concurrency": p.conc,
                 "completed": present[p.conc], "failed": 0}))
    m = first._not_run(plan, manifests.JobState.CANCELLED, "stopped")
    manifests.write(plan.workdir / "manifest.json", m)
    return plan.workdir / "manifest.json", m


def test_only_missing_points_run(tmp_path, pairs, monkeypatch):
    monkeypatch.delenv("GITHUB_RUN_ID", raising=False)
    monkeypatch.delenv("GITHUB_RUN_ATTEMPT", raising=False)
    path, prev = _previous_attempt(tmp_path, pairs, {4: 4, 8: 8, 16: 3})
    assert [p["status"] for p in prev["points"]] == [
        "present", "present", "incomplete", "missing", "missing", "missing"]
    again = _sweep(pairs, tmp_path / "a2", load_previous([tmp_path / "a1"]))
    one, two = again.plans
    assert one.run == [16, 32, 64, 128]
    assert [p.conc for p in one.rendered.points] == [16, 32, 64, 128]
    assert [e["conc"] for e in one.carried] == [4, 8]
    assert two.run == two.expected == [256, 512, 768, 1024, 2048]  # no previous manifest
    assert (again.run_id, again.attempt) == (prev["provenance"]["run-id"], 2)


def test_every_point_present_runs_nothing_and_carries_all(tmp_path, pairs):
    path, prev = _previous_attempt(tmp_path, pairs, {c: c for c in (4, 8, 16, 32, 64, 128)})
    again = _sweep(pairs[:1], tmp_path / "a2", load_previous([path]))
    plan = again.plans[0]
    assert plan.run == []
    m = again._run_one(1, plan)
    assert m["complete"] is True and [p["attempt"] for p in m["points"]] == [1] * 6
    assert all((plan.workdir / p["file"]).is_file() for p in m["points"])
    assert manifests.load(plan.workdir / "manifest.json") == m


def test_a_previous_manifest_matching_no_row_is_reported(tmp_path, pairs):
    path, prev = _previous_attempt(tmp_path, pairs, {4: 4})
    out = Lines()
    again = RowRunner(pairs, repo=REPO, executor=LocalExecutor(), out_dir=tmp_path / "a2",
                  scale_down=5, previous=load_previous([path]), display=StatusLines(out))
    assert all(p.run == p.expected for p in again.plans)
    assert "matches no selected row" in out.text and "scale-down 10" in out.text


def test_an_ignored_previous_manifest_lends_nothing(tmp_path, pairs, monkeypatch):
    """Not its run id, not its attempt number: the new run is a run of its own."""
    monkeypatch.delenv("GITHUB_RUN_ID", raising=False)
    monkeypatch.delenv("GITHUB_RUN_ATTEMPT", raising=False)
    path, prev = _previous_attempt(tmp_path, pairs, {4: 4})
    again = RowRunner(pairs, repo=REPO, executor=LocalExecutor(), out_dir=tmp_path / "a2",
                  scale_down=5, previous=load_previous([path]), display=StatusLines(Lines()))
    assert again.run_id != prev["provenance"]["run-id"] and again.run_id.startswith("local-")
    assert again.attempt == 1
    assert all(p.previous is None and p.carried == [] for p in again.plans)


def test_run_context(monkeypatch):
    monkeypatch.delenv("GITHUB_RUN_ID", raising=False)
    monkeypatch.delenv("GITHUB_RUN_ATTEMPT", raising=False)
    run_id, attempt = run_context([])
    assert run_id.startswith("local-") and attempt == 1
    prev = [{"provenance": {"run-id": "123", "attempt": 2}}]
    assert run_context(prev) == ("123", 3)
    monkeypatch.setenv("GITHUB_RUN_ID", "999")
    monkeypatch.setenv("GITHUB_RUN_ATTEMPT", "5")
    assert run_context(prev) == ("999", 5)
