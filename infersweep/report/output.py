"""Writing the site into a fresh folder beside ``--out`` and swapping it in whole.

A reader (or a Pages upload) sees the old site or the new one, never half of either: on
Linux the two folders are exchanged in one ``renameat2(RENAME_EXCHANGE)``; elsewhere the old
one is renamed aside first. A build that fails leaves ``--out`` as it was. A folder that is
not a report already (no marker file) is never replaced, so a mistyped ``--out ~`` cannot
delete anything.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from infersweep.atomic import OutputError, check_writable

MARKER = ".infersweep-report"  # written in every site; its presence allows a rebuild
_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def check_out(out: Path) -> None:
    """Refuse an unusable ``--out`` before any work: a file, a folder that is not a report,
    or a place where the folder (and its temporary sibling) cannot be written."""
    what = "--out"
    out = Path(os.path.abspath(out))  # "." and "x/.." name the folder itself
    here = Path.cwd()
    if out == here or out in here.parents:
        raise OutputError(out, "it is the working folder or holds it, which a rebuild "
                          "would replace", "give a folder for the site, e.g. --out site", what)
    if out.is_symlink():  # a rebuild swaps the folder in: it would replace the link itself
        target = os.readlink(out)
        raise OutputError(out, f"it is a symbolic link (to {target}), which a rebuild would "
                          "replace with the site's folder",
                          f"give the folder it points to (--out {out.resolve()}) or a new path",
                          what)
    if out.exists():
        if not out.is_dir():
            raise OutputError(out, "it is not a folder", "give a folder for the site", what)
        if any(out.iterdir()) and not (out / MARKER).is_file():
            raise OutputError(out, "the folder is not empty and is not a report site",
                              "give a new or empty folder, or one `report build` wrote", what)
        parent = out.resolve().parent
        if not os.access(parent, os.W_OK | os.X_OK):
            raise OutputError(out, f"permission denied in {parent}",
                              "choose a folder whose parent you can write to", what)
        return
    check_writable(out, what)


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths atomically where the kernel can; False if it cannot."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return False
    rc = fn(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    if rc == 0:
        return True
    err = ctypes.get_errno()
    if err in (22, 38, 95):  # EINVAL, ENOSYS, EOPNOTSUPP: not on this file system
        return False
    raise OSError(err, os.strerror(err), str(a), None, str(b))


@contextmanager
def staged_folder(out: Path) -> Iterator[Path]:
    """A temporary folder beside ``out`` to write the site into; it replaces ``out`` when the
    block succeeds, and is removed when it fails."""
    check_out(out)
    out = Path(os.path.abspath(out))
    created = []
    p = out.parent
    while not p.exists():
        created.append(p)
        p = p.parent
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.new-", dir=out.parent))
    except OSError as exc:
        raise OutputError.from_os_error(out, exc, "--out") from None
    try:
        yield tmp
        (tmp / MARKER).write_text("written by `infersweep report build`; the next build "
                                  "replaces this folder\n")
        os.chmod(tmp, 0o755)  # mkdtemp's 0700 would hide the site from a web server
        if out.exists():
            if not _exchange(tmp, out):
                old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
                os.rename(out, old / "site")
                os.rename(tmp, out)
                tmp = old
            shutil.rmtree(tmp, ignore_errors=True)  # the old site, after the swap
        else:
            os.rename(tmp, out)
    except BaseException as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        for d in created:  # deepest first
            with suppress(OSError):
                d.rmdir()
        if isinstance(exc, OSError) and not isinstance(exc, OutputError):
            raise OutputError.from_os_error(out, exc, "the site") from None
        raise
