"""The compare page's data (infersweep/report/comparedata.py): changelog entries once each,
recipe texts numbered without the job's own folder (a recipe's text the one most of its runs
ran), the `recipe diff` of two recipes a matched point could have run (every two while few,
else the closest in time), and the data file that cannot close its script."""

from __future__ import annotations

import dataclasses
import itertools

import pytest
import yaml

from infersweep.recipe import diff as differ
from infersweep.report import comparedata
from tests import compareruns, reportruns


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    return compareruns.write(tmp_path_factory.mktemp("runs"))


def test_changelog_entries_are_kept_once_and_each_run_names_its_own(runs):
    d = comparedata.arrange(runs)
    assert [e["description"] for e in d["entries"]] == [["Bump the ATOM image."],
                                                        ["Mooncake over TCP for 1P1D."]]
    assert {k: v["changelog"] for k, v in d["runs"].items()} == {
        "101-1": [], "102-1": [0], "103-1": [], "104-1": [0, 1]}
    assert d["runs"]["104-1"]["refs"] == "main → pr-104"


def test_one_text_per_recipe_though_every_local_job_wrote_its_own_folder(runs):
    d = comparedata.arrange(runs)
    fps = [runs[0].points[0]["recipe_fingerprint"], runs[3].points[0]["recipe_fingerprint"]]
    one = d["recipes"][f"{reportruns.KEY}\n{reportruns.ONE}\n8k/1k"]
    assert one == {fps[0][:16]: 0, fps[1][:16]: 2}
    assert list(d["recipes"][f"{reportruns.KEY}\n{reportruns.TWO}\n8k/1k"].values()) == [1]
    assert list(d["diffs"]) == ["0 2"]  # only the 1P1D slot saw two recipes


def test_the_diff_is_recipe_diffs_of_the_two_recipes_the_jobs_ran(runs):
    d = comparedata.arrange(runs)
    old, new = runs[2].recipes[0], runs[3].recipes[0]
    assert old["recipe_name"] == new["recipe_name"] == reportruns.ONE
    found = differ.differences(*(yaml.safe_load(comparedata.job_folder_free(
        r["text"], r["config_key"], r["recipe_name"])) for r in (old, new)))
    assert d["diffs"]["0 2"] == [[x.section, x.key, differ.show(x.a), differ.show(x.b)]
                                 for x in found]
    assert [x.key for x in found] == ["model.container", "max-num-seqs"]  # no folder change


def test_the_job_folder_is_written_the_same_wherever_it_was():
    one = comparedata.job_folder_free("--result-dir /a/b/k/r/logs x '/c/k/r' /k/r2 k/r",
                                      "k", "r")
    assert one == "--result-dir <job folder>/logs x '<job folder>' /k/r2 k/r"


def test_a_recipe_is_the_text_most_of_its_runs_ran_and_a_bare_run_says_it_has_none(runs):
    bare = dataclasses.replace(runs[0], run_id="100", recipes=[],
                               staged_at="2026-11-30T10:00:00Z")
    odd = dataclasses.replace(runs[1], recipes=[{**runs[1].recipes[0], "text": "name: odd\n"},
                                                runs[1].recipes[1]])
    d = comparedata.arrange([bare, runs[0], odd, *runs[2:]])
    assert d["runs"]["100-1"]["recipes"] is False and d["runs"]["101-1"]["recipes"] is True
    texts = sorted(n for fps in d["recipes"].values() for n in fps.values())
    assert texts == [0, 1, 3]  # 101 and 103's 1P1D text, not 102's
    assert list(d["diffs"]) == ["0 3"]


def test_a_config_with_very_many_recipes_keeps_the_diffs_closest_in_time(runs):
    many = [dataclasses.replace(
        runs[0], run_id=str(1000 + i), staged_at=f"2026-12-01T10:{i:02d}:00Z",
        points=[{**p, "recipe_fingerprint": f"{i:064x}"} for p in runs[0].points],
        recipes=[{**r, "recipe_fingerprint": f"{i:064x}",
                  "text": r["text"].replace("max-num-seqs: 128", f"max-num-seqs: {i + 1}")}
                 for r in runs[0].recipes]) for i in range(40)]
    d = comparedata.arrange(many)
    per_slot = len(d["diffs"]) // 2  # two topologies
    assert comparedata.MAX_PAIRS - 40 < per_slot <= comparedata.MAX_PAIRS < 40 * 39 // 2
    one = sorted(d["recipes"][f"{reportruns.KEY}\n{reportruns.ONE}\n8k/1k"].values())
    assert all(f"{a} {b}" in d["diffs"] for a, b in itertools.pairwise(one))
    assert f"{one[0]} {one[-1]}" not in d["diffs"]  # the farthest apart are left out
    assert comparedata._pairs(list(range(25))) == [
        (a, a + g) for g in range(1, 25) for a in range(25 - g)]  # 300: every two


def test_a_recipe_that_does_not_parse_gives_its_reason_not_a_failed_build(runs):
    broken = dataclasses.replace(runs[3], recipes=[{**runs[3].recipes[0], "text": "a: [\n"},
                                                   runs[3].recipes[1]])
    d = comparedata.arrange([*runs[:3], broken])
    assert "error" in d["diffs"]["0 2"]


def test_the_data_file_reads_back_and_no_value_closes_its_script(runs):
    evil = dataclasses.replace(runs[3], changelog={"entries": [
        {"config-keys": ["k"], "description": ["</script><script>alert(1)</script> & more"]}]})
    d = comparedata.arrange([*runs[:3], evil])
    text = comparedata.script(d)
    assert "</script" not in text and "<" not in text and "&" not in text
    assert comparedata.load_script(text) == d
    with pytest.raises(ValueError, match="not a compare data file"):
        comparedata.load_script("var x = 1;")
