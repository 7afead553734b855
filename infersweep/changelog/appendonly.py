"""Append-only changelog entries: run only the points a change adds to existing curves.

The generated rows are the contract: a curve is a row without its points (``conc``,
``exp-name``). Existing curves and points must survive unchanged; new points, and new
curves within a series whose image is unchanged, are the delta that runs.
"""

from __future__ import annotations

import json

from infersweep.config.catalog import Catalog
from infersweep.diagnostics import Diagnostic, InputError
from infersweep.matrix.generate import SCENARIO_TYPES
from infersweep.matrix.rows import concs

_POINT_FIELDS = ("conc", "exp-name", "recipe-fingerprint")


def _error(message: str, hint: str = "") -> InputError:
    return InputError(Diagnostic("perf-changelog.yaml", 0, 0, message, hint,
                                 "changelog-append-only"))


def curve_key(row: dict) -> str:
    """A row without its points: rows with equal keys are points of one curve."""
    return json.dumps({k: v for k, v in row.items() if k not in _POINT_FIELDS}, sort_keys=True)


def _series(row: dict) -> str:
    """The visual series a curve is drawn in; all its curves must share one image."""
    agentic = row.get("scenario-type") == "agentic-coding"
    key = {k: row.get(k) for k in ("model", "model-prefix", "precision", "framework", "runner",
                                   "disagg")}
    key["agentic"] = agentic
    if not agentic:
        key |= {"isl": row.get("isl"), "osl": row.get("osl"),
                "spec-decoding": row.get("spec-decoding")}
    key["offload"] = row.get("kv-offloading", "none") != "none"
    key["hardware"] = [(row.get(r) or {}).get("hardware") for r in ("prefill", "decode")]
    return json.dumps(key, sort_keys=True)


def delta(base_rows: list[dict], head_rows: list[dict]) -> list[dict]:
    base: dict[str, set[int]] = {}
    head: dict[str, set[int]] = {}
    for row in base_rows:
        base.setdefault(curve_key(row), set()).update(concs(row))
    for row in head_rows:
        head.setdefault(curve_key(row), set()).update(concs(row))
    if not base:
        raise _error("append-only needs an existing curve at the base revision",
                     "use a regular entry for a new configuration")
    if base.keys() - head.keys():
        raise _error("append-only may not remove or modify existing generated recipes",
                     "keep every existing search-space entry unchanged")
    for key, points in base.items():
        missing = points - head[key]
        if missing:
            raise _error(f"append-only may not remove existing concurrency points "
                         f"{sorted(missing)}")
    images: dict[str, set[str]] = {}
    for row in base_rows:
        images.setdefault(_series(row), set()).add(row["image"])
    out: list[dict] = []
    emitted: dict[str, set[int]] = {}
    for row in head_rows:
        key = curve_key(row)
        new = [c for c in concs(row) if c not in base.get(key, set())
               and c not in emitted.get(key, set())]
        if not new:
            continue
        series_images = images.get(_series(row), set())
        if series_images != {row["image"]}:
            raise _error(f"append-only point for image '{row['image']}' does not extend a "
                         "series with that image",
                         "an image change needs a regular entry that re-runs the curve")
        emitted.setdefault(key, set()).update(new)
        out.append(dict(row, conc=new) if isinstance(row["conc"], list) else row)
    if not out:
        raise _error("append-only entry did not add any generated points",
                     "add concurrency points or drop append-only")
    return out


def check_scope(change, base_catalog: Catalog) -> None:
    """Outside the selected configs and scenarios, base and head catalogs are identical."""
    allowed: dict[str, set[str]] = {}
    for entry, keys in zip(change.entries, change.keys, strict=True):
        for key in keys:
            allowed.setdefault(key, set()).update(entry.get("scenario-type") or SCENARIO_TYPES)
    head, base = change.catalog.entries, base_catalog.entries
    missing = sorted(k for k in allowed if k not in base)
    if missing:
        raise _error(f"append-only needs every selected config at the base revision; "
                     f"missing: {', '.join(missing)}", "use a regular entry for new configs")
    for key in sorted(set(head) | set(base)):
        if key not in allowed:
            if head.get(key) != base.get(key):
                raise _error(f"append-only change also modifies config '{key}', which no "
                             "entry selects", "revert it or move it to its own pull request")
            continue
        h, b = head[key], base[key]
        if set(h["scenarios"]) != set(b["scenarios"]):
            raise _error(f"append-only may not add or remove scenarios of '{key}'")
        others = set(h["scenarios"]) - allowed[key]
        if others:
            strip = lambda e: {k: v for k, v in e.items() if k != "scenarios"}  # noqa: E731
            if strip(h) != strip(b) or any(h["scenarios"][s] != b["scenarios"][s]
                                           for s in others):
                raise _error(f"append-only change to '{key}' touches scenarios or fields "
                             "outside the entry's scenario-type")
