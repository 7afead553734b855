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

from infersweep.diagnostics import InputError

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


def preflight(t: Targets, what: str) -> None:
    """Raise one InputError listing every reason the run could not write ``t``."""
    errs: list[str] = []
    probed: set[str] = set()
    for path in t.all():
        msg = _check(path, probed)
        if msg and msg not in errs:
            errs.append(f"{what}: {msg}" if not msg.startswith("--") else msg)
    if errs:
        raise InputError(errs if len(errs) > 1 else errs[0])


def _check(path: str, probed: set[str]) -> str | None:
    path = os.path.abspath(path)
    if len(os.fsencode(path)) >= _path_max():
        return f"{path!r} is longer than the system allows ({_path_max() - 1} bytes)"
    try:
        st = os.stat(path)
    except FileNotFoundError:
        st = None
    except NotADirectoryError:
        st = None  # reported below for the component that is a file
    except OSError as exc:
        return f"cannot use {path}: {exc.strerror}"
    if st is not None and not stat.S_ISREG(st.st_mode):
        kind = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file"
        return f"{path} is {kind}; the result must be a file it can replace (choose another " \
               "--result-filename or --result-dir)"
    # the nearest folder that exists, and the ones that will be created below it
    folder = os.path.dirname(path)
    missing = []
    while not os.path.lexists(folder):
        missing.append(os.path.basename(folder))
        folder = os.path.dirname(folder)
    if not os.path.isdir(folder):
        return f"{folder} is a file, not a folder, so {path} cannot be created " \
               "(choose another --result-dir)"
    name_max = _name_max(folder)
    for part in missing:
        if len(os.fsencode(part)) > name_max:
            return f"folder name {part[:40]!r}... is longer than {name_max} bytes"
    name = os.path.basename(path)
    if len(os.fsencode(name)) + _TEMP_EXTRA > name_max:
        return (f"file name {name[:40]!r}... is too long: {len(os.fsencode(name))} bytes, at "
                f"most {name_max - _TEMP_EXTRA} (choose a shorter --result-filename)")
    if folder not in probed:
        probed.add(folder)
        err = _probe(folder)
        if err:
            return f"cannot create files in {folder}: {err} (choose another --result-dir)"
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
