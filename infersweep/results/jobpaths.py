"""A path a manifest names must stay inside its job folder (the manifest's folder).

Refused, as ``results-path``: an absolute path, a ``..`` part, a backslash, a NUL, and a
path that resolves outside the folder, through a symbolic link anywhere along it. A manifest is data
(it may come from another run's artifacts); it never makes results read a file elsewhere.
"""

from __future__ import annotations

import os
from pathlib import Path

from infersweep.diagnostics import Diagnostic, InputError


def _refuse(manifest: Path, pointer: str, raw: str, why: str) -> InputError:
    return InputError(Diagnostic(
        str(manifest), 0, 0, f"{pointer} is {raw[:200]!r}: {why}",
        "a manifest names its result files relative to its own folder; rerun the job or "
        "restore the manifest `sweep run` wrote", "results-path"))


def _first_link(root: str, parts: tuple[str, ...]) -> str | None:
    """The first part of ``root``/``parts`` that is a symbolic link (its path), or None."""
    here = root
    for part in parts:
        here = os.path.join(here, part)
        if os.path.islink(here):
            return here
    return None


def inside(manifest: Path, raw: str, pointer: str, root: str | None = None) -> Path:
    """``raw`` as a path below ``manifest``'s folder (as the manifest spells it, unresolved),
    or :class:`InputError` naming ``pointer`` (``/points/3/file``). ``root``: the folder
    resolved already (a manifest's points share it)."""
    if "\x00" in raw or not raw:
        raise _refuse(manifest, pointer, raw, "not a file name")
    if raw.startswith("/") or raw[1:2] == ":":
        raise _refuse(manifest, pointer, raw, "an absolute path, expected one inside the job "
                      f"folder {manifest.parent}")
    if "\\" in raw:  # a separator elsewhere, a plain character here: never what was meant
        raise _refuse(manifest, pointer, raw, "it has a backslash; a manifest separates "
                      "folders with /")
    parts = tuple(p for p in raw.split("/") if p not in ("", "."))
    if ".." in parts:
        raise _refuse(manifest, pointer, raw, "it climbs out of the job folder (..)")
    folder = manifest.parent
    root = root or os.path.realpath(folder)
    link = _first_link(root, parts)  # without one, the path is plainly below the folder
    if link is not None:
        try:
            resolved = Path(root, *parts).resolve(strict=False)
        except (OSError, RuntimeError) as exc:  # a symbolic link loop
            raise _refuse(manifest, pointer, raw, f"it cannot be resolved ({exc})") from None
        if not resolved.is_relative_to(root):
            shown = f"{Path(link).relative_to(root).as_posix()} -> {os.path.realpath(link)}"
            raise _refuse(manifest, pointer, raw, f"it resolves to {resolved}, outside the job "
                          f"folder {folder} (symbolic link {shown})")
    return folder / raw
