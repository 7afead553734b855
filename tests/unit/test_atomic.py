"""Output paths: a clear error for a path that cannot be written, and never a half file."""

from __future__ import annotations

from pathlib import Path

import pytest

from infersweep import ghactions
from infersweep.atomic import (
    OutputError,
    append_all_or_nothing,
    atomic_writer,
    check_writable,
    write_atomic,
)

DEV_FULL = Path("/dev/full")  # every write fails with ENOSPC, as on a full disk


def tree(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


def test_atomic_write_under_a_regular_file_is_an_output_error(tmp_path):
    (tmp_path / "blocker").write_text("x")
    with pytest.raises(OutputError, match="cannot write output"):
        write_atomic(tmp_path / "blocker" / "sub" / "out.json", "{}")
    assert tree(tmp_path) == {"blocker"}


def test_atomic_write_removes_the_folders_it_made_when_the_write_fails(tmp_path):
    target = tmp_path / "new" / "deeper" / "out.json"
    with pytest.raises(RuntimeError), atomic_writer(target) as fh:
        fh.write(b"half")
        raise RuntimeError("the producer failed half-way")
    assert tree(tmp_path) == set()


def test_atomic_write_onto_a_directory_keeps_it(tmp_path):
    (tmp_path / "out").mkdir()
    with pytest.raises(OutputError, match="it is a directory"):
        write_atomic(tmp_path / "out", "{}")
    assert tree(tmp_path) == {"out"}


@pytest.mark.skipif(not DEV_FULL.exists(), reason="needs /dev/full")
def test_append_to_a_full_disk_is_an_output_error():
    with pytest.raises(OutputError, match="No space left on device") as info:
        append_all_or_nothing(DEV_FULL, "name=value\n", "GITHUB_OUTPUT")
    assert "free some space" in str(info.value)


def test_a_failed_append_leaves_the_old_content(tmp_path):
    out = tmp_path / "github_output"
    out.write_text("first=1\n")
    append_all_or_nothing(out, "second=2\n")
    assert out.read_text() == "first=1\nsecond=2\n"
    with pytest.raises(OutputError, match="No such file or directory"):
        append_all_or_nothing(tmp_path / "missing-folder" / "x", "y")
    assert tree(tmp_path) == {"github_output"}


@pytest.mark.parametrize(("make", "target", "words"), [
    (lambda d: (d / "f").write_text("x"), "f/out", "is not a directory"),
    (lambda d: (d / "dir").mkdir(), "dir", "it is a directory"),
    (lambda d: None, "x" * 300, "longer than|too long"),
    (lambda d: None, ".", "not a file name"),
])
def test_check_writable_refuses_before_any_work(tmp_path, make, target, words):
    make(tmp_path)
    before = tree(tmp_path)
    with pytest.raises(OutputError, match=words):
        check_writable(tmp_path / target if target != "." else ".", "--metadata-out")
    assert tree(tmp_path) == before


def test_check_writable_accepts_new_folders_and_creates_nothing(tmp_path):
    check_writable(tmp_path / "a" / "b" / "out.json")
    assert tree(tmp_path) == set()


def test_github_output_targets_are_checked_by_name(tmp_path):
    (tmp_path / "f").write_text("x")
    with pytest.raises(OutputError, match="cannot write --github-output"):
        ghactions.check_targets({"--github-output": str(tmp_path / "f" / "out"),
                                 "--step-summary": None})
