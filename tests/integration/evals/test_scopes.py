"""An honest full-size eval passes judged for staging (the default scope); an honest
scaled-down eval passes judged as a local run and is refused for staging unless the
thresholds file lowers the model's minimum number of questions."""

from __future__ import annotations

import pytest

from tests.conftest import REPO
from tests.integration.evals.conftest import SCALED, run_eval
from tests.unit.evals import evalfolder

pytestmark = pytest.mark.integration

THRESHOLDS = REPO / "configs" / "eval-thresholds.yaml"


def test_an_honest_full_size_eval_passes_for_staging(gsm8k, tmp_path, run_cli):
    out = tmp_path / "ev"
    p = run_eval(gsm8k, out, "--eval-accuracy", "0.96", limit=None,
                 extra=["--concurrency", 128])
    assert p.returncode == 0, p.stderr[-3000:]
    code, stdout, _ = run_cli("eval", "check", out, "--thresholds", THRESHOLDS,
                              "--model-prefix", "dsv4", "--audit", tmp_path / "audit.jsonl")
    assert code == 0, stdout
    assert "over 1,319 questions (--scope full)" in stdout
    assert "threshold 0.91 (models.dsv4)" in stdout
    assert len((tmp_path / "audit.jsonl").read_text().splitlines()) == 1319


@pytest.mark.parametrize(("limits", "code", "said"), [
    (None, 1, "[eval-too-few-questions] the eval asked the first 66 of 1,319 questions "
              "(--limit 66); judged for staging, an eval of m needs at least 1,319 (default)"),
    ("default:\n  gsm8k: 0.5\n  gsm8k-min-questions: 66\n", 0, "PASS"),
    ("default:\n  gsm8k: 0.5\nmodels:\n  m:\n    gsm8k-min-questions: 66\n", 0, "PASS"),
    ("default:\n  gsm8k: 0.5\n  gsm8k-min-questions: 60\nmodels:\n  m:\n"
     "    gsm8k-min-questions: 67\n", 1, "needs at least 67 (models.m)"),
])
def test_a_scaled_down_eval_for_staging_needs_the_thresholds_minimum(honest, tmp_path, run_cli,
                                                                     limits, code, said):
    path = THRESHOLDS
    if limits is not None:
        path = tmp_path / "thresholds.yaml"
        path.write_text(limits + evalfolder.pinned_section())
    got, stdout, _ = run_cli("eval", "check", honest, "--thresholds", path)
    assert got == code, stdout
    assert said in stdout
    assert f"over {SCALED} of 1,319 questions (scaled down) (--scope full)" in stdout


def test_the_gate_api_judges_in_process(honest, gsm8k):
    """What a gate calls: the strict scope by default, the local one when asked, and a
    dataset given in place of the recorded one."""
    from infersweep.evals import check, thresholds
    from infersweep.evals.scope import Scope

    limits = thresholds.load(str(THRESHOLDS))
    strict = check.check_folder(honest, limits, None)
    assert not strict.passed and strict.scope is Scope.FULL
    assert [d.rule for d in strict.diagnostics] == ["eval-too-few-questions"]
    local = check.check_folder(honest, limits, None, scope=Scope.LOCAL, dataset=gsm8k[0])
    assert local.passed and local.problems == []
    assert (local.questions, local.dataset_rows) == (SCALED, 1319)
    assert local.coverage == "66 of 1,319 questions (scaled down)"
    assert local.dataset == f"{gsm8k[0]} (--dataset)"
