"""Output paths are checked before the run, and written without losing the records."""

from __future__ import annotations

import os

import pytest

from infersweep.bench import outputs
from infersweep.diagnostics import InputError


def _refused(t: outputs.Targets) -> str:
    with pytest.raises(InputError) as ei:
        outputs.preflight(t)
    return str(ei.value)


def test_targets_and_their_interrupted_variants(tmp_path):
    t = outputs.targets(str(tmp_path / "out"), "res.json", save_records=True)
    assert t.result == str(tmp_path / "out" / "res.json")
    assert t.records == str(tmp_path / "out" / "res.records.jsonl")
    i = t.interrupted()
    assert i.result.endswith("res.interrupted.json")
    assert i.records.endswith("res.interrupted.records.jsonl")
    assert outputs.targets(None, "r.json", save_records=False).records is None


def test_a_folder_that_does_not_exist_yet_is_fine_and_is_not_created(tmp_path):
    outputs.preflight(outputs.targets(str(tmp_path / "a" / "b"), "res.json", True))
    assert list(tmp_path.iterdir()) == []  # the probe file is gone, no folder made


def test_an_existing_result_file_may_be_replaced(tmp_path):
    (tmp_path / "res.json").write_text("{}")
    outputs.preflight(outputs.targets(str(tmp_path), "res.json", True))


def test_a_fifo_or_device_in_the_way_is_refused(tmp_path):
    os.mkfifo(tmp_path / "res.json")
    assert "is not a regular file" in _refused(outputs.targets(str(tmp_path), "res.json", True))


def test_a_records_path_that_is_a_directory_is_refused(tmp_path):
    (tmp_path / "res.records.jsonl").mkdir()
    msg = _refused(outputs.targets(str(tmp_path), "res.json", True))
    assert "res.records.jsonl is a directory" in msg


def test_a_name_that_fits_but_whose_derived_names_do_not_is_refused(tmp_path):
    name = "r" * 230 + ".json"  # fits in 255 bytes, but not with .interrupted.records.jsonl
    assert len(name) < 255
    assert "file name is too long" in _refused(outputs.targets(str(tmp_path), name, True))


def test_a_folder_under_a_regular_file_is_refused(tmp_path):
    (tmp_path / "f").write_text("x")
    msg = _refused(outputs.targets(str(tmp_path / "f" / "sub"), "res.json", True))
    assert "is a file, not a folder" in msg and msg.count("\n") == 0  # one error, not four


def test_a_folder_where_files_cannot_be_created_is_refused():
    assert "cannot create files in /proc" in _refused(
        outputs.targets("/proc/infersweep-test", "res.json", True))


def test_write_keeps_an_output_in_scratch_when_its_target_fails(tmp_path):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    (tmp_path / "gone").write_text("a file where the result folder was")
    t = outputs.targets(str(tmp_path / "gone"), "res.json", True)

    def put(data):
        def write(path):
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(data)
        return write

    done = outputs.write(t, put("result"), put("records"), str(scratch))
    assert done.result is None and done.records is None
    assert sorted(os.path.basename(p) for p in done.kept) == ["res.json", "res.records.jsonl"]
    assert (scratch / "res.records.jsonl").read_text() == "records"
    assert len(done.errors) == 2 and "cannot write the records" in done.errors[0]


def test_write_reports_when_even_scratch_fails(tmp_path):
    t = outputs.targets(str(tmp_path), "res.json", False)

    def full(path):
        with open("/dev/full", "w") as f:  # a write that fails with ENOSPC
            f.write("x")
            f.flush()

    done = outputs.write(t, full, full, str(tmp_path))
    assert done.kept == [] and any("either" in e for e in done.errors)
    assert "No space left on device" in done.errors[0]
