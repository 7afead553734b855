"""The evals view's data file: each eval judged by the thresholds file, both filters' scores
with a standard error (lm-eval's, else binomial), and the script safe to load."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from infersweep.evals import thresholds
from infersweep.report import evalsdata, views
from tests import reportruns

REPO = Path(__file__).resolve().parents[3]


def test_standard_error_is_lm_evals_else_binomial():
    assert evalsdata.standard_error(0.9, 0.012, 50) == (0.012, "lm-eval")
    se, source = evalsdata.standard_error(0.95, None, 50)
    assert source == "binomial" and se == pytest.approx(math.sqrt(0.95 * 0.05 / 50))
    assert evalsdata.standard_error(1.0, None, 1319) == (0.0, "binomial")
    for score, n in ((None, 50), (0.9, 0), (0.9, None), (1.5, 50), (0.9, "x")):
        assert evalsdata.standard_error(score, None, n) == (None, "")


def test_rows_are_judged_by_the_thresholds_file(tmp_path):
    runs = reportruns.runs_with_evals(tmp_path)
    limits = thresholds.load(str(REPO / "configs" / "eval-thresholds.yaml"))
    data = evalsdata.arrange(views.arrange(runs, limits), judged=True)
    assert data["tasks"] == ["gsm8k"] and data["judged"] is True
    rows = {(r["run_id"], r["config"]): r for r in data["rows"]}
    assert len(rows) == 4
    failing = rows[("502", "dsv4-fp4-mi355x-atom-disagg")]
    assert (failing["passed"], failing["threshold"], failing["threshold_source"]) == (
        False, 0.91, "models.dsv4")
    assert failing["strict"] == {"value": 0.8, "se": 0.01, "se_from": "lm-eval"}
    assert (failing["seq"], failing["n"]) == ("8k/1k", 50)
    passing = rows[("502", reportruns.FP8_KEY)]
    assert passing["passed"] is True and passing["strict"]["se_from"] == "binomial"
    unjudged = evalsdata.arrange(views.arrange(runs, None), judged=False)
    assert {(r["passed"], r["threshold"]) for r in unjudged["rows"]} == {(None, None)}


def test_the_script_cannot_be_closed_by_a_value(tmp_path):
    runs = reportruns.runs_with_evals(tmp_path)
    runs[0].evals[0]["model"] = "</script><script>alert(1)</script>&"
    data = evalsdata.arrange(views.arrange(runs, None), judged=False)
    text = evalsdata.script(data)
    assert "<" not in text and ">" not in text and "&" not in text
    assert evalsdata.load_script(text) == data
    with pytest.raises(ValueError, match="not an evals data file"):
        evalsdata.load_script("window.OTHER = {};")
