"""The changelog gate on InferenceX's real history: appends after every separator it uses.

InferenceX's perf-changelog.yaml was built by appending entries at its end; between them it
has single empty lines, double empty lines, whitespace-only lines and combinations. Each
state of that history is rebuilt by cutting the real file at an entry boundary (and at
every line of the separator that follows), committed into a real git repository, and then
appended to: the way docs/adding-a-config.md says (one empty line, then the entry) must
pass `changelog check` and `changelog matrix` after every one of them, and InferenceX's own
next append must always give a matrix (formatting is only a warning there).
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

import pytest

from tests.gitrepo import GitRepo

pytestmark = pytest.mark.integration

ENTRY = """- config-keys:
    - dsv4-fp4-mi355x-atom-disagg
  description:
    - "Re-run on the new image."
  pr-link: XXX
"""
DOCS_APPEND = "\n" + ENTRY  # "at the end of perf-changelog.yaml, after one empty line"


@cache
def _lines(path: Path) -> tuple[str, ...]:
    return tuple(path.read_text().splitlines(keepends=True))


def _boundaries(lines) -> list[tuple[int, int, int]]:
    """(end of an entry's text, start of the next entry, end of the next entry) per boundary."""
    starts = [i for i, line in enumerate(lines) if line.startswith("- config-keys:")]
    out = []
    for k, start in enumerate(starts[1:], 1):
        end = start
        while lines[end - 1].strip() == "":
            end -= 1
        stop = starts[k + 1] if k + 1 < len(starts) else len(lines)
        while lines[stop - 1].strip() == "":
            stop -= 1
        out.append((end, start, stop))
    return out


def _shapes(lines) -> dict[tuple[str, ...], list[tuple[int, int, int]]]:
    """Every separator shape the history uses -> its boundaries, in file order."""
    shapes: dict[tuple[str, ...], list] = {}
    for end, start, stop in _boundaries(lines):
        shape = tuple(line.rstrip("\n") for line in lines[end:start])
        shapes.setdefault(shape, []).append((end, start, stop))
    return shapes


def _cuts(lines) -> list[tuple[str, int]]:
    """Base states: after the entry text and after each separator line, once per shape."""
    cuts = [("end-of-file", len(lines))]
    for shape, where in _shapes(lines).items():
        end, start, _ = where[0]
        for n in range(start - end + 1):
            cuts.append((f"{'+'.join(map(repr, shape))}@{n}", end + n))
    return cuts


def _repo(tmp_path: Path, inferencex: Path, changelog: str, *, nvidia: bool = False) -> GitRepo:
    repo = GitRepo(tmp_path / "ix")
    names = ["amd-master.yaml", "runners.yaml"] + (["nvidia-master.yaml"] if nvidia else [])
    files = {f"configs/{n}": (inferencex / "configs" / n).read_text() for n in names}
    repo.commit("base", {**files, "perf-changelog.yaml": changelog})
    return repo


def test_history_has_the_irregular_separators(inferencex):
    """The premise: the real file has whitespace-only and doubled separators."""
    shapes = _shapes(_lines(inferencex / "perf-changelog.yaml"))
    assert ("",) in shapes and ("", "") in shapes
    assert any(any(s and not s.strip() for s in shape) for shape in shapes)


def _run(run_cli, repo, command, *extra):
    return run_cli("changelog", command, "--repo", repo.path, "--base-ref", "HEAD~1",
                   "--head-ref", "HEAD", *extra)


def _cut_ids():
    from tests.conftest import INFERENCEX

    path = INFERENCEX / "perf-changelog.yaml"
    return [name for name, _ in _cuts(_lines(path))] if path.is_file() else ["absent"]


@pytest.mark.parametrize("cut_name", _cut_ids())
def test_the_documented_append_passes_after_any_history(inferencex, tmp_path, run_cli,
                                                        cut_name):
    lines = _lines(inferencex / "perf-changelog.yaml")
    cut = dict(_cuts(lines))[cut_name]
    base = "".join(lines[:cut])
    repo = _repo(tmp_path, inferencex, base)
    repo.commit("append", {"perf-changelog.yaml": base + DOCS_APPEND})
    code, out, err = _run(run_cli, repo, "check")
    assert code == 0, err
    assert "1 entry appended" in out
    code, out, err = _run(run_cli, repo, "matrix")
    assert code == 0, err
    assert "warning: perf-changelog.yaml" not in err
    assert json.loads(out)["multi_node"]["8k1k"]
    if base.splitlines()[-1].strip() == "":  # the base's separator may also serve
        repo.git("reset", "-q", "--hard", "HEAD~1")
        repo.commit("without own separator", {"perf-changelog.yaml": base + ENTRY})
        code, _, err = _run(run_cli, repo, "check")
        assert code == 0, err


def test_whitespace_separator_left_by_the_previous_pr(inferencex, tmp_path, run_cli):
    """InferenceX's PR 2663 state: the base ends '  ' (a whitespace-only line the previous
    entry left behind); the next PR adds an empty line and its entry."""
    lines = _lines(inferencex / "perf-changelog.yaml")
    [(end, start, stop)] = [b for b in _boundaries(lines)
                            if "pull/2663\n" in "".join(lines[b[1]:b[2]])]
    assert [line.rstrip("\n") for line in lines[end:start]] == ["  ", ""]
    base = "".join(lines[:end + 1])  # ... pull/2657, then '  '
    repo = _repo(tmp_path, inferencex, base, nvidia=True)
    repo.commit("2663", {"perf-changelog.yaml": "".join(lines[:stop])})
    code, out, err = _run(run_cli, repo, "check")
    assert code == 0, err
    assert "minimaxm3-fp4-gb300-dynamo-vllm-agentic-mtp-disagg" in out


@cache
def _catalog_keys(inferencex: Path) -> list[str]:
    from infersweep.config.catalog import load_catalog

    configs = inferencex / "configs"
    catalog = load_catalog([configs / "amd-master.yaml", configs / "nvidia-master.yaml"],
                           configs / "runners.yaml", strict_runners=False)
    return list(catalog.entries)


def _keys_resolve(inferencex: Path, text: str) -> bool:
    """Whether every config key the entry names is still in InferenceX's catalog."""
    import yaml

    from infersweep.matrix.keys import expand_keys

    [entry] = yaml.safe_load(text)
    return not expand_keys(entry["config-keys"], _catalog_keys(inferencex))[1]


def test_real_appends_always_give_a_matrix(inferencex, tmp_path, run_cli):
    """InferenceX's own appends, cut where the previous entry's text ends: `matrix` plans the
    run (formatting is a warning), `check` refuses only for the appended lines' layout."""
    lines = _lines(inferencex / "perf-changelog.yaml")
    tested = []
    for shape, where in _shapes(lines).items():
        for end, start, stop in reversed(where):  # the newest, whose keys still exist
            if not _keys_resolve(inferencex, "".join(lines[start:stop])):
                continue  # an old entry whose configs were removed since
            repo = _repo(tmp_path / f"s{len(tested)}-{end}", inferencex, "".join(lines[:end]),
                         nvidia=True)
            repo.commit("append", {"perf-changelog.yaml": "".join(lines[:stop])})
            code, out, err = _run(run_cli, repo, "matrix")
            assert code == 0, err
            assert json.loads(out)["changelog_metadata"]["entries"]
            irregular = shape != ("",)
            assert ("warning: perf-changelog.yaml" in err) == irregular, err
            code, _, err = _run(run_cli, repo, "check")
            if irregular:
                assert code == 1
                located = re.findall(r"perf-changelog\.yaml:(\d+):\d+: \[([\w-]+)\]", err)
                assert located, err
                assert all(end < int(n) <= start and rule == "changelog-blank"
                           for n, rule in located), err
            else:
                assert code == 0, err
            tested.append(shape)
            break
    # the regular separator and at least two irregular ones were judged on real appends
    assert ("",) in tested and len(tested) >= 3, tested


def test_an_editor_trimming_old_whitespace_lines_warns_in_matrix(inferencex, tmp_path,
                                                                 run_cli):
    """An editor that strips trailing whitespace rewrites InferenceX's whitespace-only lines
    and may drop a doubled blank line: an edit the gate refuses, but only formatting, so
    the matrix still plans exactly the appended entry's run (with a warning)."""
    lines = list(_lines(inferencex / "perf-changelog.yaml"))
    base = "".join(lines)
    repo = _repo(tmp_path, inferencex, base)
    repo.commit("clean", {"perf-changelog.yaml": base + DOCS_APPEND})
    code, clean, err = _run(run_cli, repo, "matrix")
    assert code == 0, err
    trimmed = ["\n" if line.strip() == "" else line for line in lines]
    (end, start, _), *_ = _shapes(lines)[("", "")]
    del trimmed[end]  # one of a doubled pair of empty lines
    repo.git("reset", "-q", "--hard", "HEAD~1")
    repo.commit("trimmed", {"perf-changelog.yaml": "".join(trimmed) + DOCS_APPEND})
    code, out, err = _run(run_cli, repo, "check")
    assert code == 1
    assert "whitespace changed" in err
    deleted = re.search(r"existing line (\d+) was deleted \(''\)", err)
    assert deleted and int(deleted[1]) in (end + 1, end + 2), err  # either of the pair
    assert set(re.findall(r"\[([\w-]+)\]", err)) == {"changelog-whitespace"}, err
    code, out, err = _run(run_cli, repo, "matrix")
    assert code == 0, err
    assert "warning: perf-changelog.yaml" in err and "[changelog-whitespace]" in err
    assert json.loads(out) == json.loads(clean)
