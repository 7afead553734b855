"""Unpacking a run's artifact zips without trusting them: every unsafe zip is refused before
anything is written, and nothing is left behind."""

from __future__ import annotations

import io
import stat
import warnings
import zipfile

import pytest

from infersweep.stage import artifacts as arts


def make_zip(members, compression=zipfile.ZIP_DEFLATED) -> bytes:
    """``members``: (name, data) or (ZipInfo, data)."""
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # duplicate names are the point of one case
        with zipfile.ZipFile(buf, "w", compression) as zf:
            for name, data in members:
                zf.writestr(name, data)
    return buf.getvalue()


def _info(name, mode):
    info = zipfile.ZipInfo(name)
    info.external_attr = mode << 16
    info.create_system = 3
    return info


def test_a_good_zip_unpacks_below_the_target(tmp_path):
    data = make_zip([("aggregate/results.json", b"{}"), ("results/a/b/manifest.json", b"[]"),
                     (_info("results/", stat.S_IFDIR | 0o755), b""),
                     (_info("results/x.txt", stat.S_IFREG | 0o644), b"x")])
    names = arts.extract(data, tmp_path / "out")
    assert sorted(names) == ["aggregate/results.json", "results/a/b/manifest.json",
                             "results/x.txt"]
    assert (tmp_path / "out" / "aggregate" / "results.json").read_bytes() == b"{}"


BIG = b"\0" * (3 << 20)


@pytest.mark.parametrize(("members", "limits", "fragment"), [
    ([("../evil.txt", b"x")], {}, "climbs out of the folder"),
    ([("results/../../evil.txt", b"x")], {}, "climbs out of the folder"),
    ([("/etc/evil", b"x")], {}, "absolute path"),
    ([("C:/evil", b"x")], {}, "absolute path"),
    ([("results\\..\\evil", b"x")], {}, "backslash"),
    ([(_info("results/link", stat.S_IFLNK | 0o777), b"/etc/passwd")], {}, "symbolic link"),
    ([(_info("results/fifo", stat.S_IFIFO | 0o644), b"")], {}, "not a regular file"),
    ([("a.json", b"1"), ("a.json", b"2")], {}, "appears twice"),
    ([("a/b.json", b"1"), ("a/./b.json", b"2")], {}, "appears twice"),
    ([("a", b"1"), ("a/b", b"2")], {}, "both a file and a folder"),
    ([("a.json", b"x" * 2000)], {"member_bytes": 1000}, "more than the limit of 1000"),
    ([("a", b"x" * 600), ("b", b"y" * 600)], {"total_bytes": 1000}, "unpacks to more than"),
    ([(f"f{i}", b"") for i in range(11)], {"members": 10}, "11 members"),
    ([("bomb.bin", BIG)], {"ratio": 100.0}, "compressed more than 100 to 1"),
])
def test_unsafe_zips_are_refused_and_nothing_is_written(tmp_path, members, limits, fragment):
    data = make_zip(members)
    with pytest.raises(arts.UnsafeArchive) as err:
        arts.extract(data, tmp_path / "out", arts.Limits(**limits))
    assert fragment in str(err.value)
    assert not (tmp_path / "out").exists()
    assert list(tmp_path.iterdir()) == []


def test_an_encrypted_member_is_refused(tmp_path):
    info = zipfile.ZipInfo("secret.json")
    data = bytearray(make_zip([(info, b"{}")]))
    # set bit 0 of the general-purpose flags in the local header and the central directory
    for sig, offset in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        at = data.index(sig) + offset
        data[at] |= 1
    with pytest.raises(arts.UnsafeArchive, match="encrypted"):
        arts.extract(bytes(data), tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_not_a_zip_and_an_oversized_zip(tmp_path):
    with pytest.raises(arts.UnsafeArchive, match="not a zip file"):
        arts.extract(b"<html>expired</html>", tmp_path / "a")
    with pytest.raises(arts.UnsafeArchive, match="the zip is"):
        arts.extract(make_zip([("a", b"x" * 100)]), tmp_path / "b", arts.Limits(zip_bytes=50))
    assert list(tmp_path.iterdir()) == []


def test_a_member_whose_data_is_corrupt_leaves_nothing(tmp_path):
    data = bytearray(make_zip([("a.json", b"{}"), ("b.json", b"hello world" * 10)],
                              zipfile.ZIP_STORED))
    at = data.index(b"hello world")
    data[at:at + 5] = b"HELLO"  # the CRC no longer matches
    with pytest.raises(arts.UnsafeArchive, match="cannot be unpacked"):
        arts.extract(bytes(data), tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_newest_artifact_of_a_name_wins():
    listed = [{"id": 1, "name": "results_bmk", "created_at": "2026-12-01T10:00:00Z"},
              {"id": 3, "name": "results_bmk", "created_at": "2026-12-01T12:00:00Z"},
              {"id": 2, "name": "results_bmk_x", "created_at": "2026-12-01T13:00:00Z"}]
    assert arts.newest(listed, "results_bmk")["id"] == 3
    assert arts.newest(listed, "changelog-metadata") is None
