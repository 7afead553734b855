"""A local run's changelog metadata: the checkout's commit and the entries naming its configs."""

from __future__ import annotations

import pytest

from infersweep.changelog.local import entries_naming, local_metadata
from infersweep.diagnostics import InputError
from tests.gitrepo import GitRepo

HEADER = "# yaml-language-server: $schema=schemas/perf-changelog.schema.json\n\n"


def entry(keys: list[str], text: str) -> str:
    listed = "".join(f"    - {k}\n" for k in keys)
    return f"- config-keys:\n{listed}  description:\n    - \"{text}\"\n  pr-link: XXX\n\n"


def test_entries_naming_the_swept_keys_by_name_or_glob_in_file_order(tmp_path):
    (tmp_path / "perf-changelog.yaml").write_text(
        HEADER + entry(["a-fp4-mi355x-atom"], "first") + entry(["b-fp8-h200-vllm"], "other")
        + entry(["a-*"], "glob") + entry(["c-x", "a-fp4-mi355x-atom"], "several"))
    found = entries_naming(tmp_path, ["a-fp4-mi355x-atom"])
    assert [e["description"] for e in found] == [["first"], ["glob"], ["several"]]
    assert found[0] == {"config-keys": ["a-fp4-mi355x-atom"], "description": ["first"],
                        "pr-link": "XXX", "evals-only": False, "all-evals": False,
                        "append-only": False}
    assert entries_naming(tmp_path, ["zz"]) == []


def test_the_commit_is_recorded_and_an_entry_appended_later_is_the_later_runs_alone(tmp_path):
    repo = GitRepo(tmp_path / "repo")
    first_sha = repo.commit("one", {"perf-changelog.yaml": HEADER + entry(["k"], "one")})
    first = local_metadata(repo.path, ["k"])
    assert first["head_ref"] == first_sha and first["base_ref"] is None
    repo.commit("two", {"perf-changelog.yaml": HEADER + entry(["k"], "one") + entry(["k"], "two")})
    second = local_metadata(repo.path, ["k"])
    assert second["head_ref"] != first_sha
    assert [e for e in second["entries"] if e not in first["entries"]] == [
        {"config-keys": ["k"], "description": ["two"], "pr-link": "XXX", "evals-only": False,
         "all-evals": False, "append-only": False}]


def test_outside_a_repository_there_is_no_commit_and_without_a_changelog_no_entry(tmp_path):
    assert local_metadata(tmp_path, ["k"]) == {"base_ref": None, "head_ref": None,
                                               "entries": []}


def test_a_changelog_that_is_not_valid_is_refused_with_its_location(tmp_path):
    (tmp_path / "perf-changelog.yaml").write_text(HEADER + "- config-keys: [k]\n  pr-link: 4\n")
    with pytest.raises(InputError) as caught:
        entries_naming(tmp_path, ["k"])
    text = str(caught.value)
    assert "perf-changelog.yaml:3:" in text, text
