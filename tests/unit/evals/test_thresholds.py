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


def test_the_minimum_of_questions_is_the_full_split_unless_the_file_says_otherwise(repo_root):
    data = thresholds.load(str(repo_root / "configs" / "eval-thresholds.yaml"))
    assert thresholds.min_questions(data, "dsv4", "x") == thresholds.MinQuestions(1319, "default")
    bare = {"default": {"gsm8k": 0.85}}
    assert thresholds.min_questions(bare, None, "m") == thresholds.MinQuestions(
        thresholds.GSM8K_TEST_QUESTIONS, "the full test split")


def test_the_minimum_of_questions_follows_the_longest_prefix_that_has_one():
    data = {"default": {"gsm8k": 0.85, "gsm8k-min-questions": 500},
            "models": {"glm5": {"gsm8k-min-questions": 200}, "glm5.1": {"gsm8k": 0.93}}}
    assert thresholds.min_questions(data, "glm5.1", "m") == thresholds.MinQuestions(
        200, "models.glm5")  # glm5.1 sets only a score: its minimum comes from glm5
    assert thresholds.min_questions(data, "llama", "m") == thresholds.MinQuestions(500, "default")
    assert thresholds.for_model(data, "glm5", "m") == thresholds.Threshold(0.85, "default")


def test_a_minimum_below_one_is_a_schema_error(tmp_path):
    p = tmp_path / "t.yaml"
    p.write_text("default:\n  gsm8k: 0.85\n  gsm8k-min-questions: 1.5\n")
    with pytest.raises(InputError) as exc:
        thresholds.load(str(p))
    assert "[schema]" in str(exc.value) and "gsm8k-min-questions" in str(exc.value)
