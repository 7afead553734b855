"""The changelog gate and a newcomer's working tree, on real git repositories: uncommitted
edits are named first (the gate reads HEAD), ``--working-tree`` judges them, an edited old
line next to an appended entry is blamed as an edit, a base-ref typo gets a fetch command
that works, and ``--output-format github`` annotates the diff. Each case asserts the first
line the user sees."""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.gitrepo import APPENDED_ENTRY, GitRepo, frozen_base_files

pytestmark = pytest.mark.integration

KEY = "dsv4-fp4-mi355x-atom-disagg"


@pytest.fixture
def repo(tmp_path) -> GitRepo:
    r = GitRepo(tmp_path / "repo")
    r.commit("base", frozen_base_files())
    r.git("checkout", "-q", "-b", "pr")
    return r


def _changelog(repo: GitRepo) -> str:
    return (repo.path / "perf-changelog.yaml").read_text()


def _check(run_cli, repo, *extra, base="main", head=("--head-ref", "HEAD")):
    return run_cli("changelog", "check", "--repo", repo.path, "--base-ref", base, *head,
                   *extra)


def _first(text: str) -> str:
    return text.splitlines()[0] if text else ""


def test_an_uncommitted_append_is_named_before_nothing_appended(repo, run_cli):
    repo.write("perf-changelog.yaml", _changelog(repo) + APPENDED_ENTRY)
    code, _, err = _check(run_cli, repo)
    assert code == 1
    assert _first(err) == (
        "error: perf-changelog.yaml: [changelog-uncommitted] perf-changelog.yaml has "
        "uncommitted changes, which this check does not see: the errors below are about the "
        "last commit, not your edits (commit them; the gate reads HEAD, not the working tree; "
        "or pass --working-tree to check the files as they are)")
    assert "no entries were appended" in err


def test_a_staged_catalog_key_is_named_before_did_you_mean(repo, run_cli):
    master = repo.path / "configs" / "amd-master.yaml"
    text = master.read_text()
    new_key = KEY + "-v2"
    block = text[text.index(KEY + ":"):]
    entry = APPENDED_ENTRY.replace(KEY, new_key)
    repo.write("perf-changelog.yaml", _changelog(repo) + entry)
    repo.git("commit", "-q", "-m", "append", "--", "perf-changelog.yaml")
    master.write_text(text + "\n" + block.replace(KEY + ":", new_key + ":", 1))
    repo.git("add", "configs/amd-master.yaml")  # staged, not committed
    code, _, err = _check(run_cli, repo)
    assert code == 1
    assert _first(err).startswith("error: configs/amd-master.yaml: [changelog-uncommitted] "
                                  "configs/amd-master.yaml has uncommitted changes")
    assert f"config key '{new_key}' is not in the catalog" in err


def test_working_tree_judges_uncommitted_edits_and_leaves_them_alone(repo, run_cli):
    master = (repo.path / "configs" / "amd-master.yaml").read_text()
    new_key = KEY + "-v2"
    # an untracked new master file is judged too: the entry names its key
    block = master[master.index(KEY + ":"):]
    repo.write("configs/extra-master.yaml", block.replace(KEY + ":", new_key + ":", 1))
    repo.write("perf-changelog.yaml", _changelog(repo) + APPENDED_ENTRY.replace(KEY, new_key))
    before = repo.git("status", "--porcelain")
    head = repo.git("rev-parse", "HEAD")
    code, out, err = _check(run_cli, repo, "--working-tree", head=())
    assert code == 0, err
    assert _first(out).startswith("ok: 1 entry appended to perf-changelog.yaml in the working "
                                  "tree since ")
    assert repo.git("status", "--porcelain") == before
    assert repo.git("rev-parse", "HEAD") == head
    assert repo.git("diff", "--cached", "--name-only") == ""


def test_working_tree_reports_its_errors_as_the_working_tree(repo, run_cli):
    repo.write("perf-changelog.yaml", _changelog(repo) + APPENDED_ENTRY.replace(KEY, "nope-*"))
    code, _, err = _check(run_cli, repo, "--working-tree", head=())
    assert code == 1
    assert _first(err).startswith("error: perf-changelog.yaml:")
    assert "is not in the catalog at 'the working tree'" in _first(err)


def test_working_tree_with_another_head_ref_is_a_usage_error(repo, run_cli):
    code, _, err = _check(run_cli, repo, "--working-tree", head=("--head-ref", "main"))
    assert code == 2
    assert "--working-tree judges the working tree on top of HEAD; drop --head-ref main" in err


def test_a_clean_pass_warns_about_uncommitted_catalog_edits(repo, run_cli):
    repo.commit("append", {"perf-changelog.yaml": _changelog(repo) + APPENDED_ENTRY})
    with open(repo.path / "configs" / "amd-master.yaml", "a") as f:
        f.write("# a note\n")
    code, out, err = _check(run_cli, repo)
    assert code == 0, err
    assert _first(err) == (
        "warning: configs/amd-master.yaml: [changelog-uncommitted] configs/amd-master.yaml has "
        "uncommitted changes, which this check did not see (commit them; the gate reads HEAD, "
        "not the working tree; or pass --working-tree to check the files as they are)")
    assert _first(out).startswith("ok: 1 entry appended")


def test_a_head_ref_other_than_the_checkout_does_not_mention_the_working_tree(repo, run_cli):
    repo.commit("append", {"perf-changelog.yaml": _changelog(repo) + APPENDED_ENTRY})
    repo.git("branch", "judged")
    repo.commit("later")  # HEAD is no longer the judged commit
    repo.write("perf-changelog.yaml", _changelog(repo) + "junk\n")
    code, _, err = _check(run_cli, repo, head=("--head-ref", "judged"))
    assert code == 0, err
    assert "uncommitted" not in err


def test_an_edited_pr_link_beside_an_append_is_an_edit_not_an_insertion(repo, run_cli):
    text = _changelog(repo)
    last = text.rstrip("\n").splitlines()
    assert last[-1] == "  pr-link: XXX"
    edited = text[: text.rindex("pr-link: XXX")] + "pr-link: https://github.com/o/r/pull/7\n"
    repo.commit("edit and append", {"perf-changelog.yaml": edited + APPENDED_ENTRY})
    code, _, err = _check(run_cli, repo)
    assert code == 1
    n = len(last)
    assert _first(err) == (
        f"error: perf-changelog.yaml:{n}:1: [changelog-edit] existing line {n} was edited "
        "(was '  pr-link: XXX', now '  pr-link: https://github.com/o/r/pull/7') (the changelog "
        "is append-only: restore the line exactly as on the base branch and add a new entry at "
        "the end instead)")
    assert "inserted" not in err


def test_github_output_annotates_the_edited_line(repo, run_cli):
    text = _changelog(repo)
    edited = text[: text.rindex("pr-link: XXX")] + "pr-link: https://github.com/o/r/pull/7\n"
    repo.commit("edit and append", {"perf-changelog.yaml": edited + APPENDED_ENTRY})
    n = len(text.rstrip("\n").splitlines())
    code, out, _ = _check(run_cli, repo, "--output-format", "github")
    assert code == 1
    assert _first(out) == (
        f"::error file=perf-changelog.yaml,line={n},col=1,title=infersweep changelog check "
        "[changelog-edit]::existing line "
        f"{n} was edited (was '  pr-link: XXX', now '  pr-link: https://github.com/o/r/pull/7') "
        "(the changelog is append-only: restore the line exactly as on the base branch and add "
        "a new entry at the end instead)")


def test_a_base_ref_typo_suggests_a_fetch_that_works(tmp_path, repo, run_cli):
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--branch", "pr", str(repo.path), str(clone)],
                   check=True)
    code, _, err = run_cli("changelog", "check", "--repo", clone, "--base-ref", "origin/mian",
                           "--head-ref", "HEAD")
    assert code == 1
    first = _first(err)
    assert first.startswith("error: <git>: [git-ref] unknown git revision 'origin/mian' "
                            "(--base-ref)")
    assert "did you mean 'main'? (run `git fetch origin main`, then pass --base-ref origin/main)" \
        in first
    assert "git fetch origin origin/" not in err


def test_check_format_json(repo, run_cli):
    repo.commit("append", {"perf-changelog.yaml": _changelog(repo) + APPENDED_ENTRY})
    code, out, err = _check(run_cli, repo, "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert data["ok"] is True and data["working-tree"] is False
    assert data["entries"] == [{"line": data["entries"][0]["line"], "config-keys": [KEY],
                                "scenarios": ["all"], "mode": "full"}]
    assert data["head-commit"] == repo.git("rev-parse", "HEAD")


def test_a_base_ref_typo_with_the_remote_unreachable_suggests_the_local_name(tmp_path, repo,
                                                                             run_cli):
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--branch", "pr", str(repo.path), str(clone)],
                   check=True)
    subprocess.run(["git", "-C", str(clone), "remote", "set-url", "origin",
                    str(tmp_path / "gone.git")], check=True)
    code, _, err = run_cli("changelog", "check", "--repo", clone, "--base-ref", "origin/mian",
                           "--head-ref", "HEAD")
    assert code == 1
    assert _first(err) == (
        "error: <git>: [git-ref] unknown git revision 'origin/mian' (--base-ref) (did you mean "
        "'origin/main'?; origin could not be reached to check the name; if 'mian' is right, "
        "run `git fetch origin mian`)")
