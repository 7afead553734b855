"""A run's artifacts: pick them by name, download them under a byte cap, and unpack their zips
without trusting them.

The download streams into an unnamed temporary file, counting bytes: a Content-Length above
the cap, or more bytes than the cap, stops it. The zip is then refused as a whole, before
anything is written, by the first rule it breaks (the name in brackets in the reply):

- ``stage-artifact-name``: a member's name is empty, absolute, has a ``..`` part, a
  backslash, a drive letter or a NUL; a name appears twice; a name is a file and a folder;
- ``stage-artifact-type``: a member is a symbolic link or another non-regular file (the Unix
  mode in the external attributes), encrypted, or compressed other than stored or deflate
  (bzip2 and LZMA inflate a whole block at once, unbounded);
- ``stage-artifact-size``: the download, the member count, one member or all of them
  unpacked above their limits;
- ``stage-artifact-ratio``: a member unpacks to more than ``ratio`` times its packed size
  (every member, however small: many small bombs are one big one), the whole archive to more
  than ``ratio`` times the zip, or two members' data overlap (one stored stream counted
  many times).

Declared sizes are only claims: while unpacking, the bytes each member actually yields are
counted against what it declared and the running total against the limit
(``stage-artifact-size``); data that does not match its header (length or CRC) is
``stage-artifact-data``. Members are written only below the target folder, which this
module creates; on any failure it is removed, so a refused archive leaves nothing.
"""

from __future__ import annotations

import io
import shutil
import stat
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import BinaryIO

MiB = 1 << 20
CHUNK = MiB
LOCAL_HEADER = 30  # bytes of a local file header before its name and extra field

RULE_NAME = "stage-artifact-name"
RULE_TYPE = "stage-artifact-type"
RULE_SIZE = "stage-artifact-size"
RULE_RATIO = "stage-artifact-ratio"
RULE_DATA = "stage-artifact-data"


@dataclass(frozen=True)
class Limits:
    zip_bytes: int = 1024 * MiB        # the download, counted as it streams
    total_bytes: int = 4096 * MiB      # all members unpacked
    member_bytes: int = 1024 * MiB     # one member unpacked
    members: int = 50_000
    ratio: float = 200.0               # unpacked / packed: every member, and the whole zip


class UnsafeArchive(Exception):
    """An artifact that is not unpacked: the rule it broke and what is wrong (the reply)."""

    rule: str
    message: str

    def __init__(self, which: str, message: str):
        self.rule, self.message = which, message
        super().__init__(f"[{which}] {message}")


def newest(artifacts: list[dict], name: str) -> dict | None:
    """The newest artifact of that exact name (reruns upload the same names again)."""
    same = [a for a in artifacts if a.get("name") == name]
    return max(same, key=lambda a: (str(a.get("created_at") or ""), int(a.get("id") or 0)),
               default=None)


def _shown(name: str) -> str:
    return f"member '{name[:80]}'"


def _member_problem(info: zipfile.ZipInfo) -> UnsafeArchive | None:
    name = info.filename
    if not name or "\x00" in name:
        return UnsafeArchive(RULE_NAME, "a member has an empty name or a NUL in it")
    if "\\" in name:
        return UnsafeArchive(RULE_NAME, f"{_shown(name)} has a backslash in its name")
    if name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        return UnsafeArchive(RULE_NAME, f"{_shown(name)} has an absolute path")
    if ".." in PurePosixPath(name).parts:
        return UnsafeArchive(RULE_NAME, f"{_shown(name)} climbs out of the folder (..)")
    mode = info.external_attr >> 16
    if mode and stat.S_IFMT(mode) == stat.S_IFLNK:
        return UnsafeArchive(RULE_TYPE, f"{_shown(name)} is a symbolic link")
    if mode and stat.S_IFMT(mode) not in (0, stat.S_IFREG, stat.S_IFDIR):
        return UnsafeArchive(RULE_TYPE, f"{_shown(name)} is not a regular file")
    if info.flag_bits & 0x1:
        return UnsafeArchive(RULE_TYPE, f"{_shown(name)} is encrypted")
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        return UnsafeArchive(RULE_TYPE, f"{_shown(name)} is compressed with method "
                             f"{info.compress_type}; artifacts are stored or deflated")
    return None


def _norm(name: str) -> str:
    return "/".join(p for p in PurePosixPath(name).parts if p not in ("", "."))


def _sizes(info: zipfile.ZipInfo, limits: Limits) -> UnsafeArchive | None:
    """A member's declared size against the member limit and the ratio (no size floor)."""
    if info.file_size > limits.member_bytes:
        return UnsafeArchive(RULE_SIZE, f"{_shown(info.filename)} unpacks to {info.file_size} "
                             f"bytes, more than the limit of {limits.member_bytes}")
    if info.file_size > limits.ratio * max(info.compress_size, 1):
        return UnsafeArchive(RULE_RATIO, f"{_shown(info.filename)} is compressed more than "
                             f"{limits.ratio:g} to 1 ({info.compress_size} bytes unpack to "
                             f"{info.file_size}: a zip bomb?)")
    return None


def _name_bytes(info: zipfile.ZipInfo) -> int:
    """The length of the name as stored (UTF-8 when flagged, else code page 437)."""
    return len(info.orig_filename.encode("utf-8" if info.flag_bits & 0x800 else "cp437"))


def _overlap(infos: list[zipfile.ZipInfo]) -> UnsafeArchive | None:
    """Two members whose data overlap: each member takes at least its local header, name and
    packed data from where it starts, and the next may start only after that."""
    spans = sorted((i.header_offset, i.header_offset + LOCAL_HEADER + _name_bytes(i)
                    + i.compress_size, i.filename) for i in infos)
    for (_, end, name), (start, _, other) in zip(spans, spans[1:], strict=False):
        if start < end:
            return UnsafeArchive(RULE_RATIO, f"{_shown(other)} starts inside the data of "
                                 f"{_shown(name)}: overlapping members unpack one stream many "
                                 "times (a zip bomb?)")
    return None


def check(zf: zipfile.ZipFile, limits: Limits, zip_size: int) -> list[zipfile.ZipInfo]:
    """The members to write, or :class:`UnsafeArchive` for the first problem found, from
    what the zip declares (``zip_size``: its bytes)."""
    infos = zf.infolist()
    if len(infos) > limits.members:
        raise UnsafeArchive(RULE_SIZE, f"it has {len(infos)} members, more than the limit of "
                            f"{limits.members}")
    seen: set[str] = set()
    total = 0
    for info in infos:
        why = _member_problem(info) or _sizes(info, limits)
        if why:
            raise why
        key = _norm(info.filename)
        if not key:
            raise UnsafeArchive(RULE_NAME, f"{_shown(info.filename)} names the folder itself")
        if key in seen:
            raise UnsafeArchive(RULE_NAME, f"{_shown(info.filename)} appears twice")
        seen.add(key)
        total += info.file_size
        if total > limits.total_bytes:
            raise UnsafeArchive(RULE_SIZE, f"it unpacks to more than the limit of "
                                f"{limits.total_bytes} bytes")
    if total > limits.ratio * max(zip_size, 1):
        raise UnsafeArchive(RULE_RATIO, f"it unpacks to {total} bytes, more than "
                            f"{limits.ratio:g} times its {zip_size} bytes (a zip bomb?)")
    why = _overlap(infos)
    if why:
        raise why
    # a file and a folder of the same name, or a file below a file
    files = {_norm(i.filename) for i in infos if not i.is_dir()}
    for key in seen:
        parent = PurePosixPath(key).parent
        while str(parent) != ".":
            if str(parent) in files:
                raise UnsafeArchive(RULE_NAME, f"member '{parent}' is both a file and a folder")
            parent = parent.parent
    return infos


def _size_of(source) -> int:
    if isinstance(source, (bytes, bytearray, memoryview)):
        return len(source)
    pos = source.seek(0, io.SEEK_END)
    source.seek(0)
    return pos


def extract(source: bytes | BinaryIO, target: Path, limits: Limits = Limits()) -> list[str]:
    """Unpack the zip ``source`` (its bytes, or a seekable binary file) into ``target``
    (which must not exist yet); the members' names. On any problem nothing is left at
    ``target``."""
    size = _size_of(source)
    if size > limits.zip_bytes:
        raise UnsafeArchive(RULE_SIZE, f"the zip is {size} bytes, more than the limit of "
                            f"{limits.zip_bytes}")
    stream = io.BytesIO(source) if isinstance(source, (bytes, bytearray, memoryview)) else source
    try:
        zf = zipfile.ZipFile(stream)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise UnsafeArchive(RULE_DATA, f"it is not a zip file ({exc})") from None
    with zf:
        infos = check(zf, limits, size)
        target = Path(target)
        target.mkdir(parents=True, exist_ok=False)
        try:
            return _write(zf, infos, target.resolve(), limits)
        except BaseException as exc:
            shutil.rmtree(target, ignore_errors=True)
            if isinstance(exc, (UnsafeArchive, KeyboardInterrupt, SystemExit)):
                raise
            if isinstance(exc, (zipfile.BadZipFile, OSError, EOFError, ValueError,
                                NotImplementedError)):
                raise UnsafeArchive(RULE_DATA, f"it cannot be unpacked ({exc})") from None
            raise


def _write(zf: zipfile.ZipFile, infos: list[zipfile.ZipInfo], root: Path,
           limits: Limits) -> list[str]:
    names = []
    budget = Budget(limits.total_bytes)
    for info in infos:
        dest = (root / _norm(info.filename)).resolve()
        if not dest.is_relative_to(root) or dest == root:
            raise UnsafeArchive(RULE_NAME, f"{_shown(info.filename)} leaves the folder")
        if info.is_dir():
            dest.mkdir(parents=True, exist_ok=True)
            continue
        dest.parent.mkdir(parents=True, exist_ok=True)
        try:
            with zf.open(info) as src, open(dest, "xb") as out:
                copy_counted(src, out, info.filename, info.file_size, budget)
        except zipfile.BadZipFile as exc:  # the CRC: data that does not match its header
            raise UnsafeArchive(RULE_DATA, f"{_shown(info.filename)} does not unpack to what "
                                f"its header declares ({exc})") from None
        names.append(_norm(info.filename))
    return names


class Budget:
    """The bytes all members may still unpack to, counted as they are written."""

    def __init__(self, limit: int):
        self.limit, self.used = limit, 0

    def take(self, n: int) -> None:
        self.used += n
        if self.used > self.limit:
            raise UnsafeArchive(RULE_SIZE, f"it unpacks to more than the limit of {self.limit} "
                                "bytes (counted while unpacking)")


def copy_counted(src: BinaryIO, out: BinaryIO, name: str, declared: int,
                 budget: Budget) -> int:
    """Copy one member, counting what it actually yields: more than it ``declared`` (a zip
    that lies about sizes), or past the archive's ``budget``, stops it."""
    written = 0
    while chunk := src.read(CHUNK):
        written += len(chunk)
        if written > declared:
            raise UnsafeArchive(RULE_SIZE, f"{_shown(name)} holds more data than its header "
                                f"says ({declared} bytes)")
        budget.take(len(chunk))
        out.write(chunk)
    return written


def download(gh, artifact: dict, target: Path, limits: Limits = Limits()) -> list[str]:
    """Download ``artifact`` (an entry of the run's artifact list) through ``gh``
    (:class:`infersweep.stage.github.GitHub`) into an unnamed temporary file beside
    ``target``, at most ``limits.zip_bytes`` whatever the listing says, and unpack it into
    ``target``. :class:`GitHubError` as the client raises it (a 410: expired);
    :class:`UnsafeArchive` for everything about the zip. Only ``target`` is left, and only
    when the whole archive was unpacked."""
    from infersweep.stage.github import TooLarge

    name = str(artifact.get("name"))
    listed = artifact.get("size_in_bytes")
    if isinstance(listed, int) and listed > limits.zip_bytes:
        raise UnsafeArchive(RULE_SIZE, f"the zip is {listed} bytes (as listed), more than the "
                            f"limit of {limits.zip_bytes}")
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryFile(dir=target.parent, prefix=".artifact-") as spool:
        try:
            gh.download_artifact_to(int(artifact["id"]), name, spool, limits.zip_bytes)
        except TooLarge as exc:
            raise UnsafeArchive(RULE_SIZE, f"the download {exc.detail}, more than the limit of "
                                f"{limits.zip_bytes} bytes; it was stopped there") from None
        spool.seek(0)
        return extract(spool, target, limits)
