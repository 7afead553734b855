"""A manifest cannot make results read a file outside its job folder: not by an absolute
path, not by climbing out with `..`, not through a symbolic link. Every target here is an
honest result file, so a checker that only reads what it is pointed at would pass it."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from infersweep.diagnostics import InputError
from infersweep.results import check, collect, process
from tests import resultsrun

NAME = "mi355x-atom-dsv4-disagg-1p1d-tp8-8k1k"
RESULT = f"logs/fixed-seq/{NAME}-c4.json"


def _job(tmp_path):
    m = resultsrun.write_job(tmp_path / "run", resultsrun.disagg_row([4]))
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    shutil.copy(m.parent / RESULT, outside / "x.json")
    return m, outside


def _point_file(m, value: str) -> None:
    data = json.loads(m.read_text())
    data["points"][0]["file"] = value
    m.write_text(json.dumps(data))


def _refusal(m) -> InputError:
    with pytest.raises(InputError) as err:
        process.process_point(process.points_of(m)[0])
    d = err.value.diagnostics[0]
    assert d.rule == "results-path" and d.path == str(m)
    assert d.message.startswith("/points/0/file is ")
    return err.value


def test_a_point_file_that_climbs_out_is_refused(tmp_path):
    m, _ = _job(tmp_path)
    _point_file(m, "../../../elsewhere/x.json")
    assert (m.parent / "../../../elsewhere/x.json").is_file()
    assert "climbs out of the job folder (..)" in str(_refusal(m))


def test_an_absolute_point_file_is_refused(tmp_path):
    m, outside = _job(tmp_path)
    _point_file(m, str(outside / "x.json"))
    assert "an absolute path, expected one inside the job folder" in str(_refusal(m))


def test_a_symbolic_link_out_of_the_job_folder_is_refused(tmp_path):
    m, outside = _job(tmp_path)
    link = m.parent / "logs/fixed-seq/link.json"
    os.symlink(outside / "x.json", link)
    _point_file(m, "logs/fixed-seq/link.json")
    text = str(_refusal(m))
    assert f"resolves to {outside / 'x.json'}, outside the job folder" in text
    assert "symbolic link logs/fixed-seq/link.json ->" in text


def test_a_linked_folder_out_of_the_job_folder_is_refused(tmp_path):
    m, outside = _job(tmp_path)
    os.symlink(outside, m.parent / "logs/away")
    _point_file(m, "logs/away/x.json")
    assert "symbolic link logs/away ->" in str(_refusal(m))


def test_a_link_loop_is_refused(tmp_path):
    m, _ = _job(tmp_path)
    os.symlink(m.parent / "logs/b", m.parent / "logs/a")
    os.symlink(m.parent / "logs/a", m.parent / "logs/b")
    _point_file(m, "logs/a")
    err = _refusal(m)
    assert "cannot be resolved" in str(err) or "outside the job folder" in str(err)


def test_a_link_that_stays_inside_is_followed(tmp_path):
    m, _ = _job(tmp_path)
    os.symlink(f"{NAME}-c4.json", m.parent / "logs/fixed-seq/same.json")
    _point_file(m, "logs/fixed-seq/same.json")
    done = process.process_point(process.points_of(m)[0])
    assert done.row["result_file"].endswith("logs/fixed-seq/same.json")


def test_the_gate_names_the_manifest_and_the_pointer(tmp_path):
    m, _ = _job(tmp_path)
    _point_file(m, "../../../elsewhere/x.json")
    g = collect.gather([tmp_path / "run"], allow_incomplete=True)
    problems, counts = check.check(collect.aggregate(g), errors=g.errors)
    assert [(p.kind, p.file) for p in problems] == [("unusable", str(m))]
    assert problems[0].message.startswith("[results-path] /points/0/file is "
                                          "'../../../elsewhere/x.json'")
    assert counts["complete"] == 0
