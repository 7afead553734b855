"""Atomic file writes: a reader sees the old file or the whole new one, never half.

A path that cannot be written is bad input, not a crash: :class:`OutputError` (an
:class:`~infersweep.diagnostics.InputError`) names the path and the reason, and nothing is
left behind (neither the temporary file nor directories created for it).
:func:`check_writable` asks the same question before any work is done, so a command can refuse
an unusable output path up front instead of after minutes of work.
"""

from __future__ import annotations

import errno
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import BinaryIO

from infersweep.diagnostics import Diagnostic, InputError

_HINTS = {
    errno.ENOSPC: "free some space on that disk or write elsewhere",
    errno.EDQUOT: "free some space on that disk or write elsewhere",
    errno.EACCES: "choose a directory you can write to",
    errno.EPERM: "choose a directory you can write to",
    errno.EROFS: "that file system is read-only; write elsewhere",
    errno.ENOTDIR: "a parent of the path is a file, not a directory",
    errno.EISDIR: "give a file name, not a directory",
    errno.ENAMETOOLONG: "use a shorter file name",
}


class OutputError(InputError, OSError):
    """An output path that cannot be written. Also an ``OSError``, so a caller that keeps its
    data when a write fails (``except OSError``) still does."""

    def __init__(self, path: str | Path, reason: str, hint: str = "", what: str = "output",
                 errno_: int | None = None):
        self.path = str(path)
        InputError.__init__(self, Diagnostic(self.path, 0, 0, f"cannot write {what}: {reason}",
                                             hint, "output-path"))
        self.errno, self.strerror, self.filename = errno_, reason, self.path

    def __str__(self) -> str:
        return "\n".join(str(d) for d in self.diagnostics)

    @classmethod
    def from_os_error(cls, path: str | Path, exc: OSError, what: str = "output") -> OutputError:
        reason = exc.strerror or str(exc)
        culprit = exc.filename if exc.filename not in (None, str(path)) else None
        if culprit is not None:
            reason += f" ({os.fsdecode(culprit)})"
        return cls(path, reason, _HINTS.get(exc.errno or 0, ""), what, exc.errno)


def _missing_parents(parent: Path) -> list[Path]:
    """The directories ``mkdir(parents=True)`` would create, deepest last."""
    missing = []
    p = parent
    while not p.exists() and p != p.parent:
        missing.append(p)
        p = p.parent
    return list(reversed(missing))


def check_writable(path: str | Path, what: str = "output") -> None:
    """Raise :class:`OutputError` unless ``path`` could be written now (nothing is created)."""
    try:
        _check_writable(Path(path), path, what)
    except OSError as exc:  # stat itself failed (a name too long, a loop of links...)
        raise OutputError.from_os_error(path, exc, what) from None


def _check_writable(target: Path, path: str | Path, what: str) -> None:
    if str(path) == "" or target.name in ("", ".", ".."):
        raise OutputError(path, "not a file name", _HINTS[errno.EISDIR], what)
    if target.is_dir():
        raise OutputError(path, "it is a directory", _HINTS[errno.EISDIR], what)
    ancestor = target.parent
    while not ancestor.exists() and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise OutputError(path, f"{ancestor} is not a directory", _HINTS[errno.ENOTDIR], what)
    try:
        name_max = os.pathconf(ancestor, "PC_NAME_MAX")
    except (OSError, ValueError):
        name_max = 255
    too_long = [part for part in target.parts if len(os.fsencode(part)) > name_max]
    if too_long:
        raise OutputError(path, f"a name is longer than {name_max} bytes",
                          _HINTS[errno.ENAMETOOLONG], what)
    if target.exists() and not os.access(target, os.W_OK):
        raise OutputError(path, "permission denied", _HINTS[errno.EACCES], what)
    if not os.access(ancestor, os.W_OK | os.X_OK):
        raise OutputError(path, f"permission denied in {ancestor}", _HINTS[errno.EACCES], what)


@contextmanager
def atomic_writer(path: str | Path, what: str = "output") -> Iterator[BinaryIO]:
    """A binary file handle whose content replaces ``path`` only when the block succeeds.

    An OSError while creating, writing or renaming becomes :class:`OutputError`; the
    temporary file and any directories made for it are removed."""
    check_writable(path, what)  # the clear reason, before anything is created
    target = Path(path)
    created = _missing_parents(target.parent)
    tmp = None
    try:
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{target.name[:200]}.", dir=target.parent)
        except OSError as exc:
            raise OutputError.from_os_error(path, exc, what) from None
        with os.fdopen(fd, "wb") as fh:
            yield fh
            try:
                fh.flush()
                os.fsync(fh.fileno())
            except OSError as exc:
                raise OutputError.from_os_error(path, exc, what) from None
        try:
            os.replace(tmp, target)
        except OSError as exc:
            raise OutputError.from_os_error(path, exc, what) from None
        tmp = None
    except BaseException:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        for d in reversed(created):
            with suppress(OSError):
                d.rmdir()
        raise


def write_atomic(path: str | Path, data: str | bytes, what: str = "output") -> None:
    with atomic_writer(path, what) as fh:
        try:
            fh.write(data.encode() if isinstance(data, str) else data)
        except OSError as exc:
            raise OutputError.from_os_error(path, exc, what) from None


def append_all_or_nothing(path: str | Path, data: str | bytes, what: str = "output") -> None:
    """Append ``data`` to ``path`` whole or not at all: on any failure the file is cut back to
    its old length (or removed if this call created it); OSError becomes :class:`OutputError`."""
    raw = data.encode() if isinstance(data, str) else data
    existed = os.path.lexists(path)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0),
                     0o666)
    except OSError as exc:
        raise OutputError.from_os_error(path, exc, what) from None
    try:
        size = os.lseek(fd, 0, os.SEEK_END)
        view = memoryview(raw)
        while view:
            view = view[os.write(fd, view):]
    except OSError as exc:
        with suppress(OSError):
            os.ftruncate(fd, size)
        os.close(fd)
        if not existed:
            with suppress(OSError):
                os.unlink(path)
        raise OutputError.from_os_error(path, exc, what) from None
    os.close(fd)
