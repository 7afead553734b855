"""The compare page's data (infersweep/report/comparedata.py): changelog entries once each,
recipe texts numbered without the job's own folder (most runs named by one default), the
`recipe diff` of every two texts a matched point could have run, and the data file that
cannot close its script."""

from __future__ import annotations

import dataclasses

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
    texts = sorted(set(d["recipes"]["default"].values()))
    assert texts == [0, 1, 2]  # 1P1D before and after, 2P1D unchanged
    assert d["recipes"]["runs"] == {}  # every run ran its fingerprint's usual text
    assert list(d["diffs"]) == ["0 2"]  # only the 1P1D slot saw two texts


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


def test_a_run_without_recipes_or_with_another_text_is_named_apart(runs):
    bare = dataclasses.replace(runs[0], run_id="100", recipes=[],
                               staged_at="2026-11-30T10:00:00Z")
    odd = dataclasses.replace(runs[1], recipes=[{**runs[1].recipes[0], "text": "name: odd\n"},
                                                runs[1].recipes[1]])
    d = comparedata.arrange([bare, runs[0], odd, *runs[2:]])
    assert d["runs"]["100-1"]["recipes"] is False
    assert d["recipes"]["runs"] == {"102-1": {f"{reportruns.KEY}\n{reportruns.ONE}": 2}}
    assert set(d["diffs"]) == {"0 2", "0 3", "2 3"}


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
