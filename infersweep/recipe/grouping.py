"""Single-node rows that start the same server run as one job: one engine start, many points.

InferenceX starts the engine once per single-node point. Here every single-node row is
rendered at its own concurrency (its template's ``row-settings`` applied) and rows whose
server comes out identical (same config, image, parallelism and engine settings: everything
but the benchmark step) become one row whose ``conc`` lists their concurrencies, in the
order the matrix gave them. A point keeps its result file, manifest entry and rerun (a rerun
runs only a job's missing points); only the engine start is shared.

Rows that do not render are left alone (the launch refuses them with their own reason), and
so are multi-node rows (one row is already one job) and eval-only rows. A group runs the eval
of its rows once, at the highest concurrency they marked: the server is the same for all.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from infersweep.diagnostics import InputError
from infersweep.recipe.lookup import is_multi_node
from infersweep.recipe.render import render_row

# row fields that differ between points of one job (the rest must be equal)
POINT_FIELDS = ("conc", "run-eval", "eval-conc", "eval-all-concs")


@dataclass
class Group:
    key: str | None  # the catalog entry, when known
    row: dict  # the job's row: the members' fields, their concurrencies as a list
    members: list[dict] = field(default_factory=list)


def server_key(row: dict, repo: Path) -> str | None:
    """What identifies the server ``row`` starts (None: not groupable)."""
    if is_multi_node(row) or row.get("eval-only") or isinstance(row.get("conc"), list):
        return None
    try:
        recipe = dict(render_row(row, repo, source="<row>").recipe)
    except InputError:
        return None
    recipe.pop("benchmark", None)
    rest = {k: v for k, v in row.items() if k not in POINT_FIELDS}
    return json.dumps([rest, recipe], sort_keys=True, default=str)


def _merge(members: list[dict]) -> dict:
    row = {k: v for k, v in members[0].items() if k not in POINT_FIELDS}
    concs: list[int] = []
    for m in members:
        if m["conc"] not in concs:
            concs.append(m["conc"])
    row["conc"] = concs if len(members) > 1 else members[0]["conc"]
    marked = [m["conc"] for m in members if m.get("run-eval")]
    row["run-eval"] = bool(marked)
    if marked and len(members) > 1:
        row["eval-conc"] = max(marked)
    elif "eval-conc" in members[0]:
        row["eval-conc"] = members[0]["eval-conc"]
    if any(m.get("eval-all-concs") for m in members):
        row["eval-all-concs"] = True
    return row


def group(pairs: list[tuple[str | None, dict]], repo: str | Path = ".") -> list[Group]:
    """The jobs of a sweep: rows that start the same server merged, in first-seen order."""
    repo = Path(repo)
    groups: list[Group] = []
    by_server: dict[tuple, Group] = {}
    for key, row in pairs:
        server = server_key(row, repo)
        found = by_server.get((key, server)) if server is not None else None
        if found is None:
            found = Group(key, dict(row), [])
            groups.append(found)
            if server is not None:
                by_server[(key, server)] = found
        found.members.append(row)
    for g in groups:
        if len(g.members) > 1:
            g.row = _merge(g.members)
    return groups


def grouped_pairs(pairs: list[tuple[str | None, dict]], repo: str | Path = ".") -> list[tuple]:
    """``pairs`` with the rows of one server merged: (key, row) per job."""
    return [(g.key, g.row) for g in group(pairs, repo)]


def grouped_rows(rows: list[dict], repo: str | Path = ".") -> list[dict]:
    """``rows`` with the rows of one server merged (the catalog key read from each row)."""
    return [g.row for g in group([(r.get("config-key"), r) for r in rows], repo)]
