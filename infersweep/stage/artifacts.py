"""A run's artifacts: pick them by name, and unpack their zips without trusting them.

The zip is refused as a whole, before anything is written, when a member's name is absolute,
has a ``..`` part, a backslash, a drive letter or a NUL; when a member is a symbolic link or
any other non-regular file (Unix mode in the external attributes); when two members have the
same name; when a member is encrypted; and when the member count, a member's size, the total
size or a member's compression ratio is above its limit. Members are then written only below
the target folder, reading no more than each member declares; a member whose data is longer
than its header says fails the whole extraction and the folder is removed.
"""

from __future__ import annotations

import io
import shutil
import stat
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

MiB = 1 << 20


@dataclass(frozen=True)
class Limits:
    zip_bytes: int = 1024 * MiB        # the downloaded zip
    total_bytes: int = 4096 * MiB      # all members unpacked
    member_bytes: int = 1024 * MiB     # one member unpacked
    members: int = 50_000
    ratio: float = 200.0               # unpacked / packed, for members above ratio_floor
    ratio_floor: int = 1 * MiB


class UnsafeArchive(Exception):
    """An artifact that is not unpacked (what is wrong with it, for the reply)."""


def newest(artifacts: list[dict], name: str) -> dict | None:
    """The newest artifact of that exact name (reruns upload the same names again)."""
    same = [a for a in artifacts if a.get("name") == name]
    return max(same, key=lambda a: (str(a.get("created_at") or ""), int(a.get("id") or 0)),
               default=None)


def _member_problem(info: zipfile.ZipInfo) -> str | None:
    name = info.filename
    if not name or "\x00" in name:
        return "a member has an empty name or a NUL in it"
    if "\\" in name:
        return f"member '{name[:80]}' has a backslash in its name"
    if name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        return f"member '{name[:80]}' has an absolute path"
    parts = PurePosixPath(name).parts
    if ".." in parts:
        return f"member '{name[:80]}' climbs out of the folder (..)"
    mode = info.external_attr >> 16
    if mode and stat.S_IFMT(mode) == stat.S_IFLNK:
        return f"member '{name[:80]}' is a symbolic link"
    if mode and stat.S_IFMT(mode) not in (0, stat.S_IFREG, stat.S_IFDIR):
        return f"member '{name[:80]}' is not a regular file"
    if info.flag_bits & 0x1:
        return f"member '{name[:80]}' is encrypted"
    return None


def _norm(name: str) -> str:
    return "/".join(p for p in PurePosixPath(name).parts if p not in ("", "."))


def check(zf: zipfile.ZipFile, limits: Limits) -> list[zipfile.ZipInfo]:
    """The members to write, or :class:`UnsafeArchive` for the first problem found."""
    infos = zf.infolist()
    if len(infos) > limits.members:
        raise UnsafeArchive(f"it has {len(infos)} members, more than the limit of "
                            f"{limits.members}")
    seen: set[str] = set()
    total = 0
    for info in infos:
        why = _member_problem(info)
        if why:
            raise UnsafeArchive(why)
        key = _norm(info.filename)
        if not key:
            raise UnsafeArchive(f"member '{info.filename[:80]}' names the folder itself")
        if key in seen:
            raise UnsafeArchive(f"member '{info.filename[:80]}' appears twice")
        seen.add(key)
        if info.file_size > limits.member_bytes:
            raise UnsafeArchive(f"member '{info.filename[:80]}' unpacks to {info.file_size} "
                                f"bytes, more than the limit of {limits.member_bytes}")
        if (info.file_size > limits.ratio_floor
                and info.file_size > limits.ratio * max(info.compress_size, 1)):
            raise UnsafeArchive(f"member '{info.filename[:80]}' is compressed more than "
                                f"{limits.ratio:g} to 1 (a zip bomb?)")
        total += info.file_size
        if total > limits.total_bytes:
            raise UnsafeArchive(f"it unpacks to more than the limit of {limits.total_bytes} "
                                "bytes")
    # a file and a folder of the same name, or a file below a file
    files = {_norm(i.filename) for i in infos if not i.is_dir()}
    for key in seen:
        parent = PurePosixPath(key).parent
        while str(parent) != ".":
            if str(parent) in files:
                raise UnsafeArchive(f"member '{parent}' is both a file and a folder")
            parent = parent.parent
    return infos


def extract(data: bytes, target: Path, limits: Limits = Limits()) -> list[str]:
    """Unpack the zip ``data`` into ``target`` (which must not exist yet); the members'
    names. On any problem nothing is left at ``target``."""
    if len(data) > limits.zip_bytes:
        raise UnsafeArchive(f"the zip is {len(data)} bytes, more than the limit of "
                            f"{limits.zip_bytes}")
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise UnsafeArchive(f"it is not a zip file ({exc})") from None
    with zf:
        infos = check(zf, limits)
        target = Path(target)
        target.mkdir(parents=True, exist_ok=False)
        root = target.resolve()
        names = []
        try:
            for info in infos:
                dest = (root / _norm(info.filename)).resolve()
                if not dest.is_relative_to(root) or dest == root:
                    raise UnsafeArchive(f"member '{info.filename[:80]}' leaves the folder")
                if info.is_dir():
                    dest.mkdir(parents=True, exist_ok=True)
                    continue
                dest.parent.mkdir(parents=True, exist_ok=True)
                _copy(zf, info, dest)
                names.append(_norm(info.filename))
        except (UnsafeArchive, zipfile.BadZipFile, OSError, EOFError, ValueError,
                NotImplementedError) as exc:
            shutil.rmtree(target, ignore_errors=True)
            if isinstance(exc, UnsafeArchive):
                raise
            raise UnsafeArchive(f"it cannot be unpacked ({exc})") from None
    return names


def _copy(zf: zipfile.ZipFile, info: zipfile.ZipInfo, dest: Path) -> None:
    written = 0
    with zf.open(info) as src, open(dest, "xb") as out:
        while chunk := src.read(MiB):
            written += len(chunk)
            if written > info.file_size:
                raise UnsafeArchive(f"member '{info.filename[:80]}' holds more data than its "
                                    "header says")
            out.write(chunk)
