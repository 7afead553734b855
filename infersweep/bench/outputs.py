"""Where a run's result and records go: checked before the first request, written at the end
without ever losing the records.

A benchmark may run for hours; an output path that cannot be written must fail it before it
starts, not after. :func:`preflight` checks every file the run may write (the result, the
records, and their ``.interrupted`` variants): the folder chain, that nothing in the way is a
regular file, a directory or a device, that names fit the file system, and, by creating and
removing a probe file, that the nearest existing folder takes new files. If writing still
fails at the end (a full disk, a folder removed meanwhile), :func:`write` keeps the outputs in
the run's scratch folder and says where.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from dataclasses import dataclass

from infersweep.diagnostics import Diagnostic, InputError

RECORDS_SUFFIX = ".records.jsonl"
INTERRUPTED = ".interrupted"
# the atomic writer's temporary name is ".<name>." plus 8 random characters
_TEMP_EXTRA = 2 + 8


@dataclass(frozen=True)
class Targets:
    result: str
    records: str | None

    def interrupted(self) -> Targets:
        """Where an interrupted run's partial outputs go (never over a complete result)."""
        stem = os.path.splitext(self.result)[0]
        return Targets(stem + INTERRUPTED + ".json",
                       stem + INTERRUPTED + RECORDS_SUFFIX if self.records else None)

    def all(self) -> list[str]:
        inter = self.interrupted()
        return [p for p in (self.result, self.records, inter.result, inter.records) if p]


def targets(result_dir: str | None, filename: str, save_records: bool) -> Targets:
    path = os.path.join(result_dir, filename) if result_dir else filename
    records = os.path.splitext(path)[0] + RECORDS_SUFFIX if save_records else None
    return Targets(path, records)


def preflight(t: Targets) -> None:
    """Raise one InputError listing every reason the run could not write ``t``."""
    errs: list[Diagnostic] = []
    folders: dict[str, str | None] = {}
    for path in t.all():
        path = os.path.abspath(path)
        folder = os.path.dirname(path)
        if folder not in folders:
            folders[folder] = _check_folder(folder)
            if folders[folder]:
                errs.append(Diagnostic("--result-dir", 0, 0, folders[folder]))
        if folders[folder]:
            continue
        msg = _check_file(path, _name_max(_existing(folder)))
        if msg:
            errs.append(Diagnostic("--result-filename", 0, 0, msg))
            break  # the other names only add suffixes to the same problem
    if errs:
        raise InputError(errs)


def _existing(folder: str) -> str:
    while not os.path.lexists(folder):
        folder = os.path.dirname(folder)
    return folder


def _check_folder(folder: str) -> str | None:
    """Can files be created in ``folder`` (creating it and its parents as needed)?"""
    if len(os.fsencode(folder)) >= _path_max():
        return f"{folder[:60]!r}... is longer than the system allows ({_path_max() - 1} bytes)"
    base = _existing(folder)
    if not os.path.isdir(base):
        return (f"{base} is {'a file' if os.path.exists(base) else 'a broken link'}, not a "
                f"folder, so {folder} cannot be created (choose another --result-dir)")
    name_max = _name_max(base)
    rest = os.path.relpath(folder, base)
    for part in ([] if rest == "." else rest.split(os.sep)):
        if len(os.fsencode(part)) > name_max:
            return f"folder name {part[:40]!r}... is longer than {name_max} bytes"
    err = _probe(base)
    if err:
        return f"cannot create files in {base}: {err} (choose another --result-dir)"
    return None


def _check_file(path: str, name_max: int) -> str | None:
    if len(os.fsencode(path)) >= _path_max():
        return f"{path[:60]!r}... is longer than the system allows ({_path_max() - 1} bytes)"
    name = os.path.basename(path)
    if len(os.fsencode(name)) + _TEMP_EXTRA > name_max:
        short = name if len(name) <= 60 else name[:30] + "..." + name[-27:]
        return (f"the result file name is too long: the run writes {short} "
                f"({len(os.fsencode(name))} bytes, {_TEMP_EXTRA} more while writing it) and the "
                f"file system allows {name_max} (choose a shorter --result-filename)")
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        return f"cannot use {path}: {exc.strerror}"
    if not stat.S_ISREG(st.st_mode):
        kind = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file"
        return (f"{path} is {kind}; the run writes a new file there (choose another "
                "--result-filename or --result-dir)")
    return None


def _probe(folder: str) -> str | None:
    try:
        fd, tmp = tempfile.mkstemp(prefix=".infersweep-probe-", dir=folder)
    except OSError as exc:
        return exc.strerror or str(exc)
    os.close(fd)
    os.unlink(tmp)
    return None


def _name_max(folder: str) -> int:
    try:
        return os.pathconf(folder, "PC_NAME_MAX")
    except (OSError, ValueError):
        return 255


def _path_max() -> int:
    try:
        return os.pathconf("/", "PC_PATH_MAX")
    except (OSError, ValueError):
        return 4096


@dataclass
class Written:
    result: str | None = None
    records: str | None = None
    kept: list[str] | None = None      # outputs saved in the scratch folder instead
    errors: list[str] | None = None


def write(t: Targets, write_result, write_records, scratch: str) -> Written:
    """Write the records, then the result (each atomically). On a failure, write that output
    into ``scratch`` instead, which the caller then keeps."""
    out = Written(kept=[], errors=[])
    steps = [("records", t.records, write_records), ("result", t.result, write_result)]
    for label, path, fn in steps:
        if path is None:
            continue
        try:
            fn(path)
            setattr(out, label, path)
        except OSError as exc:
            out.errors.append(f"cannot write the {label} to {path}: {exc.strerror or exc}")
            spare = os.path.join(scratch, os.path.basename(path))
            try:
                fn(spare)
                out.kept.append(spare)
            except OSError as exc2:
                out.errors.append(f"cannot keep the {label} in {scratch} either: "
                                  f"{exc2.strerror or exc2}")
                with contextlib.suppress(OSError):
                    os.unlink(spare)
    return out
