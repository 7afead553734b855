"""Which scope an eval is judged with by a run's own gate: its job's (scaled down or not)."""

from __future__ import annotations

import json

import pytest

from infersweep.evals.scope import Scope, of_job, of_scale_down


@pytest.mark.parametrize(("scale", "scope"), [(1, Scope.FULL), (None, Scope.FULL),
                                              (40, Scope.LOCAL), (1.5, Scope.LOCAL),
                                              ("x", Scope.FULL)])
def test_a_scaled_down_job_runs_a_local_eval(scale, scope):
    assert of_scale_down(scale) is scope


def test_the_jobs_manifest_beside_the_eval_folder_decides(tmp_path):
    (tmp_path / "eval").mkdir()
    assert of_job(tmp_path / "eval") is Scope.FULL  # no manifest: judged as staging would
    (tmp_path / "manifest.json").write_text(json.dumps({"scale-down": 40}))
    assert of_job(tmp_path / "eval") is Scope.LOCAL
    (tmp_path / "manifest.json").write_text("[]")
    assert of_job(tmp_path / "eval") is Scope.FULL


def test_the_jobs_manifest_above_the_result_dir_decides(tmp_path):
    """A job writes its eval into its manifest's result-dir (``logs/fixed-seq/eval``)."""
    folder = tmp_path / "job" / "logs" / "fixed-seq" / "eval"
    folder.mkdir(parents=True)
    (tmp_path / "job" / "manifest.json").write_text(json.dumps({"scale-down": 40}))
    assert of_job(folder) is Scope.LOCAL
