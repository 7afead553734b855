"""Turn the entries a change appends into the bucketed sweep matrix, in one process.

Follows InferenceX's changelog semantics: entries with ``all-evals`` go first; a config
named by several entries is benchmarked and evaluated once per scenario; ``evals-only``
and ``all-evals`` suppress throughput; eval selection runs over the configs of one entry
that share the same scenarios, as InferenceX batches them.
"""

from __future__ import annotations

from dataclasses import dataclass

from infersweep.changelog import appendonly, buckets
from infersweep.changelog.change import Change, catalog_at
from infersweep.diagnostics import Diagnostic, InputError
from infersweep.matrix.generate import SCENARIO_TYPES, Selection, keyed_rows
from infersweep.matrix.rows import normalise


@dataclass
class Modifiers:
    trim_conc: bool = False  # keep the lowest point of each curve (non-full sweeps)
    all_evals: bool = False  # expand eval selection, keep throughput
    evals_only: bool = False  # suppress throughput


def _groups(keys: list[str], scenarios: tuple, seen: dict[str, set]) -> dict[tuple, list[str]]:
    """Configs of one entry batched by the scenarios not yet covered for them."""
    groups: dict[tuple, list[str]] = {}
    for key in keys:
        unseen = tuple(s for s in SCENARIO_TYPES if s in scenarios and s not in seen.get(key, ()))
        if unseen:
            seen.setdefault(key, set()).update(unseen)
            groups.setdefault(unseen, []).append(key)
    return groups


def build_matrix(change: Change, mods: Modifiers, root=None) -> dict:
    entries = change.entries
    append_only = any(e.get("append-only") for e in entries)
    if append_only and (mods.all_evals or mods.evals_only):
        raise InputError(Diagnostic("<command line>", 0, 0, "append-only changelog entries "
                                    "cannot run with all-evals or evals-only modifiers",
                                    "remove the modifier label", "changelog-append-only"))
    base_catalog = None
    if append_only:
        base_catalog = catalog_at(root, change.base_commit, change.base_ref)
        appendonly.check_scope(change, base_catalog)

    order = sorted(range(len(entries)), key=lambda i: not entries[i].get("all-evals", False))
    bench_seen: dict[str, set] = {}
    eval_seen: dict[str, set] = {}
    throughput: list[dict] = []
    evals: list[dict] = []
    for i in order:
        entry, keys = entries[i], change.keys[i]
        scenarios = tuple(entry.get("scenario-type") or SCENARIO_TYPES)
        suppress = mods.evals_only or entry.get("evals-only") or entry.get("all-evals")
        if not suppress:
            for unseen, configs in _groups(keys, scenarios, bench_seen).items():
                sel = Selection(config_keys=configs, scenario_types=list(unseen), evals="none")
                rows = keyed_rows(change.catalog, sel)
                if entry.get("append-only"):
                    rows = appendonly.delta(keyed_rows(base_catalog, sel), rows)
                throughput.extend(rows)
        if entry.get("append-only"):
            continue
        expand = mods.all_evals or bool(entry.get("all-evals"))
        min_ep = entry.get("eval-min-prefill-ep")
        for unseen, configs in _groups(keys, scenarios, eval_seen).items():
            sel = Selection(config_keys=configs, scenario_types=list(unseen), evals="only",
                            all_evals=expand)
            rows = keyed_rows(change.catalog, sel)
            if min_ep is not None:
                rows = [r for r in rows if r.get("prefill") is None
                        or _int(r["prefill"].get("ep")) >= min_ep]
            evals.extend(rows)

    if mods.trim_conc:
        throughput = trim_conc(throughput)
    throughput = [normalise(r) for r in throughput]
    for row in throughput:
        row["recipe-fingerprint"] = buckets.recipe_fingerprint(row)
    metadata = {"base_ref": change.base_ref, "head_ref": change.head_ref,
                "entries": [entry_metadata(e) for e in entries]}
    return buckets.build(throughput, [normalise(r) for r in evals], metadata)


def _int(value) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return -1


def entry_metadata(entry: dict) -> dict:
    """An entry as ``changelog_metadata.json`` carries it: its flags with their defaults."""
    out = {"config-keys": entry["config-keys"], "description": entry["description"],
           "pr-link": entry["pr-link"], "evals-only": entry.get("evals-only", False),
           "all-evals": entry.get("all-evals", False),
           "append-only": entry.get("append-only", False)}
    for optional in ("eval-min-prefill-ep", "scenario-type"):
        if entry.get(optional) is not None:
            out[optional] = entry[optional]
    return out


def trim_conc(rows: list[dict]) -> list[dict]:
    """Keep one point per curve, the lowest concurrency (a smoke run, not a sweep)."""
    out: list[dict] = []
    curves: dict[str, list[int]] = {}
    for row in rows:
        if row.get("prefill") is not None:
            out.append(dict(row, conc=[min(row["conc"])]) if len(row["conc"]) > 1 else row)
            continue
        curves.setdefault(appendonly.curve_key(row), []).append(len(out))
        out.append(row)
    drop = {i for idxs in curves.values() for i in idxs
            if i != min(idxs, key=lambda j: out[j]["conc"])}
    return [row for i, row in enumerate(out) if i not in drop]
