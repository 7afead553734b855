"""Unpacking a run's artifact zips without trusting them: every unsafe zip is refused, with its
rule, before anything is written, and nothing is left behind. The bombs are built so that a
checker trusting declared sizes, or one with a size floor on its ratio check, would pass them;
they are small on disk and built without writing what they would unpack to."""

from __future__ import annotations

import io
import random
import stat
import struct
import warnings
import zipfile
import zlib

import pytest

from infersweep.stage import artifacts as arts
from infersweep.stage.github import TooLarge

MiB = 1 << 20


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


def deflated(data: bytes) -> bytes:
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    return c.compress(data) + c.flush()


def stitched_zip(names: list[str], data: bytes, *, shared: bool = False) -> bytes:
    """A zip whose members are all ``data``, deflated once: one local copy per member, or
    (``shared``) one for all, every central directory entry pointing at it (the overlapping
    bomb). Written by hand, so a zip of GiBs costs one compression of ``data``."""
    packed, crc, size = deflated(data), zlib.crc32(data), len(data)
    out, offsets = io.BytesIO(), []
    for i, name in enumerate(names):
        if shared and i:
            offsets.append(offsets[0])
            continue
        offsets.append(out.tell())
        raw = name.encode()
        out.write(struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 8, 0, 33, crc, len(packed),
                              size, len(raw), 0) + raw + packed)
    start = out.tell()
    for name, offset in zip(names, offsets, strict=True):
        raw = name.encode()
        out.write(struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, 8, 0, 33, crc,
                              len(packed), size, len(raw), 0, 0, 0, 0, 0, offset) + raw)
    out.write(struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(names), len(names),
                          out.tell() - start, start, 0))
    return out.getvalue()


def _refused(tmp_path, data, limits: arts.Limits | None = None) -> arts.UnsafeArchive:
    with pytest.raises(arts.UnsafeArchive) as err:
        arts.extract(data, tmp_path / "out", limits or arts.Limits())
    assert list(tmp_path.iterdir()) == [], "a refused archive left something behind"
    return err.value


def test_a_good_zip_unpacks_below_the_target(tmp_path):
    data = make_zip([("aggregate/results.json", b"{}"), ("results/a/b/manifest.json", b"[]"),
                     (_info("results/", stat.S_IFDIR | 0o755), b""),
                     (_info("results/x.txt", stat.S_IFREG | 0o644), b"x")])
    names = arts.extract(data, tmp_path / "out")
    assert sorted(names) == ["aggregate/results.json", "results/a/b/manifest.json",
                             "results/x.txt"]
    assert (tmp_path / "out" / "aggregate" / "results.json").read_bytes() == b"{}"


def test_a_zip_in_a_file_unpacks_like_its_bytes(tmp_path):
    data = make_zip([("a/b.json", b'{"x": 1}'), ("c.txt", b"hello " * 100)])
    spool = tmp_path / "spool.zip"
    spool.write_bytes(data)
    with open(spool, "rb") as f:
        assert sorted(arts.extract(f, tmp_path / "out")) == ["a/b.json", "c.txt"]
    assert (tmp_path / "out" / "c.txt").read_bytes() == b"hello " * 100


BIG = b"\0" * (3 << 20)


@pytest.mark.parametrize(("members", "limits", "rule", "fragment"), [
    ([("../evil.txt", b"x")], {}, arts.RULE_NAME, "climbs out of the folder"),
    ([("results/../../evil.txt", b"x")], {}, arts.RULE_NAME, "climbs out of the folder"),
    ([("/etc/evil", b"x")], {}, arts.RULE_NAME, "absolute path"),
    ([("C:/evil", b"x")], {}, arts.RULE_NAME, "absolute path"),
    ([("results\\..\\evil", b"x")], {}, arts.RULE_NAME, "backslash"),
    ([(_info("results/link", stat.S_IFLNK | 0o777), b"/etc/passwd")], {}, arts.RULE_TYPE,
     "symbolic link"),
    ([(_info("results/fifo", stat.S_IFIFO | 0o644), b"")], {}, arts.RULE_TYPE,
     "not a regular file"),
    ([("a.json", b"1"), ("a.json", b"2")], {}, arts.RULE_NAME, "appears twice"),
    ([("a/b.json", b"1"), ("a/./b.json", b"2")], {}, arts.RULE_NAME, "appears twice"),
    ([("a", b"1"), ("a/b", b"2")], {}, arts.RULE_NAME, "both a file and a folder"),
    ([("a.json", b"x" * 2000)], {"member_bytes": 1000}, arts.RULE_SIZE,
     "more than the limit of 1000"),
    ([("a", b"x" * 600), ("b", b"y" * 600)], {"total_bytes": 1000}, arts.RULE_SIZE,
     "unpacks to more than"),
    ([(f"f{i}", b"") for i in range(11)], {"members": 10}, arts.RULE_SIZE, "11 members"),
    ([("bomb.bin", BIG)], {"ratio": 100.0}, arts.RULE_RATIO, "compressed more than 100 to 1"),
])
def test_unsafe_zips_are_refused_and_nothing_is_written(tmp_path, members, limits, rule,
                                                        fragment):
    err = _refused(tmp_path, make_zip(members), arts.Limits(**limits))
    assert err.rule == rule and fragment in err.message
    assert str(err).startswith(f"[{rule}] ")


def test_many_one_mib_members_unpacking_to_4_gib_are_refused_by_every_members_ratio(tmp_path):
    """The issue's bomb: 4,096 members of 1 MiB of zeros, 4.6 MB on disk, 4 GiB unpacked.
    Each member is exactly at a 1 MiB floor and the total exactly at the 4 GiB cap, so a
    ratio check that starts above 1 MiB, with caps on declared sizes, passes it."""
    data = stitched_zip([f"results/chunk-{i:04d}.bin" for i in range(4096)], b"\0" * MiB)
    infos = zipfile.ZipFile(io.BytesIO(data)).infolist()
    assert len(data) < 5_000_000 and sum(i.file_size for i in infos) == 4096 * MiB
    assert max(i.file_size for i in infos) == MiB == arts.Limits().total_bytes // 4096
    err = _refused(tmp_path, data)
    assert err.rule == arts.RULE_RATIO
    assert "member 'results/chunk-0000.bin' is compressed more than 200 to 1" in err.message


def test_small_members_get_no_pass_from_their_size(tmp_path):
    data = stitched_zip([f"m{i}" for i in range(2000)], b"\0" * (64 << 10))
    err = _refused(tmp_path, data)
    assert err.rule == arts.RULE_RATIO and "member 'm0'" in err.message


def test_overlapping_members_are_refused_by_the_whole_archives_ratio(tmp_path):
    """500 directory entries over one stored stream: each member's ratio is ~40 to 1 (fine
    alone), the zip unpacks to 100 MB from 40 KB."""
    rnd = random.Random(0)
    data = b"".join(bytes([rnd.randrange(256)]) + b"\0" * 99 for _ in range(2000))
    bomb = stitched_zip([f"results/{i:03d}.json" for i in range(500)], data, shared=True)
    info = zipfile.ZipFile(io.BytesIO(bomb)).infolist()[0]
    assert info.file_size < 200 * info.compress_size
    err = _refused(tmp_path, bomb)
    assert err.rule == arts.RULE_RATIO
    assert f"it unpacks to {500 * len(data)} bytes, more than 200 times its {len(bomb)}" \
        in err.message


def test_overlapping_members_are_refused_whatever_the_ratio(tmp_path):
    bomb = stitched_zip(["a.bin", "b.bin", "c.bin"], random.Random(1).randbytes(5000),
                        shared=True)
    err = _refused(tmp_path, bomb, arts.Limits(ratio=1e9))
    assert err.rule == arts.RULE_RATIO and "member 'b.bin' starts inside the data of " \
        "member 'a.bin'" in err.message


def _under_declared(size: int, declared: int, crc_of_declared: bool) -> bytes:
    """A member of ``size`` zeros whose headers (central and local) say ``declared``."""
    data = bytearray(make_zip([("results/big.bin", b"\0" * size)]))
    local, central = data.index(b"PK\x03\x04"), data.index(b"PK\x01\x02")
    for at in (local + 22, central + 24):
        data[at:at + 4] = struct.pack("<I", declared)
    if crc_of_declared:
        for at in (local + 14, central + 16):
            data[at:at + 4] = struct.pack("<I", zlib.crc32(b"\0" * declared))
    return bytes(data)


def test_a_member_whose_headers_under_declare_its_size_is_refused(tmp_path):
    data = _under_declared(2 * MiB, 1000, crc_of_declared=False)
    info = zipfile.ZipFile(io.BytesIO(data)).infolist()[0]
    assert info.file_size == 1000 < info.compress_size  # every declared-size check passes
    err = _refused(tmp_path, data)
    assert err.rule == arts.RULE_DATA
    assert "member 'results/big.bin' does not unpack to what its header declares" in err.message


def test_a_lie_that_matches_its_crc_still_unpacks_no_more_than_declared(tmp_path):
    data = _under_declared(2 * MiB, 1000, crc_of_declared=True)
    assert arts.extract(data, tmp_path / "out") == ["results/big.bin"]
    assert (tmp_path / "out" / "results" / "big.bin").stat().st_size == 1000


def test_the_bytes_a_member_yields_are_counted_against_its_header_and_the_total():
    out = io.BytesIO()
    with pytest.raises(arts.UnsafeArchive) as err:
        arts.copy_counted(io.BytesIO(b"x" * 5000), out, "results/a.json", 4096,
                          arts.Budget(1 << 30))
    assert err.value.rule == arts.RULE_SIZE
    assert "member 'results/a.json' holds more data than its header says (4096" in str(err.value)
    budget = arts.Budget(6000)
    arts.copy_counted(io.BytesIO(b"y" * 4000), io.BytesIO(), "a", 4000, budget)
    with pytest.raises(arts.UnsafeArchive, match=r"more than the limit of 6000 bytes \(counted"):
        arts.copy_counted(io.BytesIO(b"z" * 4000), io.BytesIO(), "b", 4000, budget)


@pytest.mark.parametrize("method", [zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA])
def test_compression_that_inflates_unbounded_is_refused(tmp_path, method):
    err = _refused(tmp_path, make_zip([("results/a.json", b"{}" * 100)], method))
    assert err.rule == arts.RULE_TYPE and "is compressed with method" in err.message


def test_an_encrypted_member_is_refused(tmp_path):
    info = zipfile.ZipInfo("secret.json")
    data = bytearray(make_zip([(info, b"{}")]))
    # set bit 0 of the general-purpose flags in the local header and the central directory
    for sig, offset in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        at = data.index(sig) + offset
        data[at] |= 1
    err = _refused(tmp_path, bytes(data))
    assert err.rule == arts.RULE_TYPE and "encrypted" in err.message


def test_not_a_zip_and_an_oversized_zip(tmp_path):
    err = _refused(tmp_path, b"<html>expired</html>")
    assert err.rule == arts.RULE_DATA and "not a zip file" in err.message
    err = _refused(tmp_path, make_zip([("a", b"x" * 100)]), arts.Limits(zip_bytes=50))
    assert err.rule == arts.RULE_SIZE and "the zip is" in err.message


def test_a_member_whose_data_is_corrupt_leaves_nothing(tmp_path):
    data = bytearray(make_zip([("a.json", b"{}"), ("b.json", b"hello world" * 10)],
                              zipfile.ZIP_STORED))
    at = data.index(b"hello world")
    data[at:at + 5] = b"HELLO"  # the CRC no longer matches
    err = _refused(tmp_path, bytes(data))
    assert err.rule == arts.RULE_DATA and "member 'b.json'" in err.message


class FakeGitHub:
    """Writes ``body`` as the download, or raises what the real client would."""

    def __init__(self, body: bytes = b"", raises: Exception | None = None):
        self.body, self.raises, self.calls = body, raises, []

    def download_artifact_to(self, artifact_id, name, out, max_bytes):
        self.calls.append((artifact_id, name, max_bytes))
        if self.raises is not None:
            out.write(b"\0" * 1000)  # the part read before the cap
            raise self.raises
        out.write(self.body)
        return len(self.body)


def test_download_unpacks_through_a_spool_that_is_gone_afterwards(tmp_path):
    gh = FakeGitHub(make_zip([("aggregate/results.json", b"{}")]))
    art = {"id": 7, "name": "results_bmk", "size_in_bytes": 123}
    assert arts.download(gh, art, tmp_path / "results_bmk") == ["aggregate/results.json"]
    assert gh.calls == [(7, "results_bmk", arts.Limits().zip_bytes)]
    assert [p.name for p in tmp_path.iterdir()] == ["results_bmk"]


def test_a_download_past_the_cap_is_refused_and_leaves_nothing(tmp_path):
    gh = FakeGitHub(raises=TooLarge("artifact results_bmk", "passed 4096 bytes"))
    art = {"id": 7, "name": "results_bmk", "size_in_bytes": 10}  # the listing under-says it
    with pytest.raises(arts.UnsafeArchive) as err:
        arts.download(gh, art, tmp_path / "results_bmk", arts.Limits(zip_bytes=4096))
    assert err.value.rule == arts.RULE_SIZE
    assert "the download passed 4096 bytes, more than the limit of 4096" in err.value.message
    assert list(tmp_path.iterdir()) == []


def test_a_listing_above_the_cap_is_refused_without_downloading(tmp_path):
    gh = FakeGitHub(make_zip([("a", b"x")]))
    with pytest.raises(arts.UnsafeArchive, match=r"\[stage-artifact-size\] the zip is 5000 "
                                                 r"bytes \(as listed\)"):
        arts.download(gh, {"id": 1, "name": "x", "size_in_bytes": 5000}, tmp_path / "x",
                      arts.Limits(zip_bytes=4096))
    assert gh.calls == [] and list(tmp_path.iterdir()) == []


def test_newest_artifact_of_a_name_wins():
    listed = [{"id": 1, "name": "results_bmk", "created_at": "2026-12-01T10:00:00Z"},
              {"id": 3, "name": "results_bmk", "created_at": "2026-12-01T12:00:00Z"},
              {"id": 2, "name": "results_bmk_x", "created_at": "2026-12-01T13:00:00Z"}]
    assert arts.newest(listed, "results_bmk")["id"] == 3
    assert arts.newest(listed, "changelog-metadata") is None
