from __future__ import annotations

import pytest

from infersweep.diagnostics import InputError
from infersweep.evals import thresholds


def test_project_file_has_dsv4_and_default(repo_root):
    data = thresholds.load(str(repo_root / "configs" / "eval-thresholds.yaml"))
    assert thresholds.for_model(data, "dsv4", "x") == thresholds.Threshold(0.91, "models.dsv4")
    assert thresholds.for_model(data, None, "llama") == thresholds.Threshold(0.85, "default")


def test_longest_prefix_wins_and_model_name_is_the_fallback_key():
    data = {"default": {"gsm8k": 0.85},
            "models": {"glm5": {"gsm8k": 0.94}, "glm5.1": {"gsm8k": 0.93}}}
    assert thresholds.for_model(data, "glm5.1", "m").value == 0.93
    assert thresholds.for_model(data, "glm5", "m").value == 0.94
    assert thresholds.for_model(data, None, "glm5.1-fp8").source == "models.glm5.1"


def test_file_without_default_is_a_located_error(tmp_path):
    p = tmp_path / "t.yaml"
    p.write_text("models:\n  dsv4: {gsm8k: 0.91}\n")
    with pytest.raises(InputError) as exc:
        thresholds.load(str(p))
    assert f"{p}:1:1:" in str(exc.value) and "'default'" in str(exc.value)
