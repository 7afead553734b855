"""`infersweep validate` on files that are not master configs, and outside the repository."""

from __future__ import annotations

import re

import pytest

from infersweep.config.commands import OTHER_FILES
from tests.conftest import REPO

TEMPLATE = "benchmarks/multi_node/srt-slurm/atom/deepseek-v4/mi355x/disagg-1p1d-tp8-8k1k.yaml"


@pytest.mark.parametrize(("path", "command"), [
    ("perf-changelog.yaml", "`infersweep changelog check"),
    ("configs/runtimes.yaml", "`infersweep pins check`"),
    ("configs/eval-thresholds.yaml", "`infersweep eval check --thresholds FILE`"),
    (TEMPLATE, "`infersweep recipe check FILE`"),
])
def test_a_file_that_is_not_a_master_config_names_its_command(path, command, run_cli,
                                                                frozen_repo):
    code, out, err = run_cli("validate", path, cwd=frozen_repo)
    assert code == 1
    (line, *_) = err.splitlines()
    assert line.startswith(f"error: {path}: [file-kind] this is ")
    assert command in line


@pytest.mark.parametrize("path", ["configs/runners.yaml", "configs/fleets.yaml"])
def test_the_runners_and_fleets_files_are_checked_alone(path, run_cli):
    code, out, err = run_cli("validate", path, cwd=REPO)
    assert code == 0, err
    assert out.startswith("ok: ")


def test_the_commands_the_hints_name_exist_with_their_options(run_cli):
    for _, how in OTHER_FILES.values():
        for words in re.findall(r"`infersweep ([^`]+)`", how):
            parts = [w for w in words.split() if w.isidentifier() or w.startswith("--")]
            command = [w for w in parts if not w.startswith("--")]
            code, out, err = run_cli(*command, "--help")
            assert code == 0, (words, err)
            for option in (w for w in parts if w.startswith("--")):
                assert option in out, (words, option)


def test_outside_the_repository_it_names_only_options_it_has(tmp_path, run_cli):
    code, out, err = run_cli("validate", cwd=tmp_path)
    assert code == 1
    (line,) = err.splitlines()
    assert "no master configs here" in line
    _, help_text, _ = run_cli("validate", "--help")
    for option in re.findall(r"--[a-z-]+", line):
        assert option in help_text, option
