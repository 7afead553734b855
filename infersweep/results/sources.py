"""Finding a run's manifests and processed rows, always in the same (sorted) order."""

from __future__ import annotations

import json
from pathlib import Path

import orjson

from infersweep.diagnostics import Diagnostic, InputError
from infersweep.results.process import ROW_SUFFIX
from infersweep.rowjobs.manifest import FILENAME as MANIFEST


def _missing(path: Path, what: str) -> InputError:
    return InputError(Diagnostic(str(path), 0, 0, f"no {what} here",
                                 "pass a `sweep run` output folder, a manifest.json, "
                                 "processed *.row.json files or an aggregate", "results-input"))


def expand(paths, *, allow_empty: bool = False) -> tuple[list[Path], list[Path]]:
    """(manifests, row or aggregate files) named by ``paths``: files as given, folders
    searched recursively. Sorted by path, so the order never depends on the file system.
    With ``allow_empty`` a folder that is missing or holds nothing is no error (a run whose
    jobs produced nothing: the gate, given the matrix, names every missing point)."""
    manifests, rows = set(), set()
    for raw in paths:
        p = Path(raw)
        if allow_empty and not p.exists():
            continue
        if p.is_dir():
            found_m = set(p.rglob(MANIFEST))
            found_r = set(p.rglob("*" + ROW_SUFFIX))
            if not found_m and not found_r and not allow_empty:
                raise _missing(p, f"{MANIFEST} or *{ROW_SUFFIX} below this folder")
            manifests |= found_m
            rows |= found_r
        elif p.is_file():
            (manifests if p.name == MANIFEST else rows).add(p)
        else:
            raise InputError(Diagnostic(str(p), 0, 0, "no such file or folder",
                                        "pass a `sweep run` output folder or files in one",
                                        "results-input"))
    return sorted(manifests), sorted(rows)


def load_json(path: Path, what: str):
    try:  # fast, and refuses NaN like any error; the slow path words the message
        return orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        pass
    try:
        return json.loads(path.read_text(encoding="utf-8"),
                          parse_constant=lambda t: (_ for _ in ()).throw(ValueError(t)))
    except json.JSONDecodeError as exc:
        raise InputError(Diagnostic(str(path), exc.lineno, exc.colno,
                                    f"{what} is not valid JSON: {exc.msg}",
                                    rule="results-input")) from None
    except ValueError as exc:
        raise InputError(Diagnostic(str(path), 0, 0, f"{what} holds {exc}, not a number",
                                    rule="results-input")) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(Diagnostic(str(path), 0, 0, f"cannot read the {what}: {exc}",
                                    rule="results-input")) from None
