"""The one expansion routine behind `matrix full-sweep`, `matrix test-config` and the changelog.

A row is produced for every (config key, scenario item, search-space entry, concurrency,
runner) that survives the filters in :class:`Selection`; eval marking then runs over the
whole set, as InferenceX does.
"""

from __future__ import annotations

from dataclasses import dataclass

from infersweep.config.catalog import Catalog
from infersweep.config.rules import SCENARIOS as SCENARIO_TYPES
from infersweep.diagnostics import Diagnostic, InputError, did_you_mean
from infersweep.matrix import evals, rows
from infersweep.matrix.conc import conc_points, within
from infersweep.matrix.keys import expand_keys

EVAL_MODES = ("default", "none", "only")


@dataclass
class Selection:
    """What to expand. ``None`` means 'no filter'."""

    config_keys: list[str] | None = None  # exact keys or globs; None = every key
    key_prefixes: list[str] | None = None  # config-key prefixes (InferenceX --model-prefix)
    precisions: list[str] | None = None
    frameworks: list[str] | None = None
    runner_types: list[str] | None = None
    seq_lens: list[str] | None = None  # family names: 1k1k, 8k1k, or '<isl>_<osl>'
    scenario_types: list[str] | None = None
    single_node: bool = True
    multi_node: bool = True
    conc: list[int] | None = None
    min_conc: int | None = None
    max_conc: int | None = None
    max_tp: int | None = None
    max_ep: int | None = None
    step_size: int = 2
    runner_node_filter: str | None = None
    include_label_in_node_filter: bool = False  # test-config keeps the label row on a match
    evals: str = "default"  # one of EVAL_MODES
    all_evals: bool = False  # with evals="only": every eligible row evaluates

    def check(self, catalog: Catalog) -> None:
        problems = []
        if self.step_size < 2:
            problems.append(f"--step-size must be greater than 1, got {self.step_size}")
        if self.min_conc is not None and self.max_conc is not None and self.min_conc > self.max_conc:
            problems.append(f"--min-conc {self.min_conc} is greater than --max-conc {self.max_conc}")
        for name in ("min_conc", "max_conc", "max_tp", "max_ep"):
            value = getattr(self, name)
            if value is not None and value <= 0:
                problems.append(f"--{name.replace('_', '-')} must be positive, got {value}")
        for label in self.runner_types or []:
            if label not in catalog.runners.labels:
                problems.append(f"--runner-type '{label}' is not a label in "
                                f"{catalog.runners.path}; valid: "
                                + ", ".join(sorted(catalog.runners.labels)))
        if self.evals == "none" and self.all_evals:
            problems.append("--all-evals cannot be combined with --no-evals")
        problems.extend(_unmatched_filters(self, catalog))
        if problems:
            raise InputError([Diagnostic("<command line>", 0, 0, p, rule="usage")
                              for p in problems])


def _choices(values) -> str:
    values = sorted({str(v) for v in values})
    shown = ", ".join(values[:12])
    return shown + (f", ... ({len(values)} in all)" if len(values) > 12 else "")


def _unmatched_filters(sel: Selection, catalog: Catalog) -> list[str]:
    """A filter value that matches nothing in the whole catalog is a typo, not a wish for an
    empty matrix: say so and list what it could have been. (``--seq-lens`` is checked for
    its form when parsed: an absent family still leaves the agentic rows, as InferenceX.)"""
    entries = catalog.entries
    out = []

    def check(option: str, wanted: list[str] | None, present, matches=None):
        matches = matches or (lambda value, have: value in have)
        have = set(present)
        for value in wanted or []:
            if not matches(value, have):
                hint = did_you_mean(value, have)
                out.append(f"{option} {value!r} matches no config in the catalog"
                           + (f" ({hint})" if hint else "") + f"; valid: {_choices(have)}")

    check("--precision", sel.precisions, (e["precision"] for e in entries.values()))
    check("--framework", sel.frameworks, (e["framework"] for e in entries.values()))
    check("--model-prefix", sel.key_prefixes, entries,
          lambda value, have: any(k.startswith(value) for k in have))
    if sel.runner_node_filter is not None:
        names = {n for names in catalog.runners.labels.values() for n in names}
        if sel.include_label_in_node_filter:
            names |= set(catalog.runners.labels)
        if not any(sel.runner_node_filter in n for n in names):
            out.append(f"--runner-node-filter {sel.runner_node_filter!r} is part of no runner "
                       f"name in {catalog.runners.path}; runners: {_choices(names)}")
    return out


def select_keys(catalog: Catalog, patterns: list[str] | None) -> list[str]:
    keys = list(catalog.entries)
    if patterns is None:
        return keys
    found, unmatched = expand_keys(patterns, keys)
    if unmatched:
        raise InputError([Diagnostic(
            "<command line>", 0, 0,
            f"config key {p!r} matches nothing in the catalog",
            did_you_mean(p, keys) or "run `infersweep matrix full-sweep --format table` to "
            "see the keys", "unknown-key") for p in unmatched])
    return found


def _runners_for(catalog: Catalog, label: str, sel: Selection) -> list[str]:
    needle = sel.runner_node_filter
    if needle is None:
        return [label]
    names = [n for n in catalog.runners.labels.get(label, []) if needle in n]
    if sel.include_label_in_node_filter and needle in label:
        names = [label, *names]
    return names


def generate(catalog: Catalog, sel: Selection) -> list[dict]:
    """Matrix rows for ``sel``."""
    return [row for _, row in generate_keyed(catalog, sel)]


def generate_keyed(catalog: Catalog, sel: Selection) -> list[tuple[str, dict]]:
    """(config key, row) pairs for ``sel``; the key is context for people, not a row field."""
    sel.check(catalog)
    out: list[dict] = []
    origin: list[str] = []
    for key in select_keys(catalog, sel.config_keys):
        produced = _expand_entry(catalog, key, sel)
        out.extend(produced)
        origin.extend([key] * len(produced))
    return _apply_evals(out, origin, sel)


CONFIG_KEY = "config-key"  # a sweep's row field (not InferenceX's): the catalog entry it came from


def keyed_rows(catalog: Catalog, sel: Selection) -> list[dict]:
    """Rows for ``sel``, each naming its catalog entry in ``config-key``: what a benchmark job
    records as the config (never the row's ``exp-name``, which several entries share)."""
    return [{**row, CONFIG_KEY: key} for key, row in generate_keyed(catalog, sel)]


def _wanted(key: str, entry: dict, sel: Selection) -> bool:
    multinode = entry["multinode"]
    return not (
        (sel.key_prefixes and not any(key.startswith(p) for p in sel.key_prefixes))
        or (sel.precisions and entry["precision"] not in sel.precisions)
        or (sel.frameworks and entry["framework"] not in sel.frameworks)
        or (sel.runner_types and entry["runner"] not in sel.runner_types)
        or (multinode and not sel.multi_node)
        or (not multinode and not sel.single_node))


def _expand_entry(catalog: Catalog, key: str, sel: Selection) -> list[dict]:
    entry = catalog.entries[key]
    if not _wanted(key, entry, sel):
        return []
    runners = _runners_for(catalog, entry["runner"], sel)
    if not runners:
        return []
    multinode = entry["multinode"]
    scen_types = sel.scenario_types or SCENARIO_TYPES
    scenarios = entry["scenarios"]
    out: list[dict] = []
    if "fixed-seq-len" in scen_types:
        for item in scenarios.get("fixed-seq-len") or []:
            isl, osl = item["isl"], item["osl"]
            if sel.seq_lens and rows.seq_name(isl, osl) not in sel.seq_lens:
                continue
            for ss in item["search-space"]:
                points = _points(ss, sel, multinode)
                if not points:
                    continue
                if multinode:
                    out.extend(rows.multi_fixed(entry, ss, r, isl, osl, points, sel.max_ep)
                               for r in runners)
                else:
                    out.extend(rows.single_fixed(entry, ss, r, isl, osl, c, sel.max_ep)
                               for c in points for r in runners)
    if "agentic-coding" in scen_types:
        for item in scenarios.get("agentic-coding") or []:
            for ss in item["search-space"]:
                points = _points(ss, sel, multinode=False)
                if not points:
                    continue
                dram = rows.dram_budget_gb(entry, ss, item, catalog.runners.hardware, key)
                if "prefill" in ss:
                    out.extend(rows.multi_agentic(entry, ss, r, [c], dram, sel.max_ep)
                               for c in points for r in runners)
                else:
                    out.extend(rows.single_agentic(entry, ss, r, c, dram, sel.max_ep)
                               for c in points for r in runners)
    return out


def _points(ss: dict, sel: Selection, multinode: bool) -> list[int]:
    if sel.max_tp is not None and not multinode and "tp" in ss and ss["tp"] > sel.max_tp:
        return []
    only = set(sel.conc) if sel.conc is not None else None
    return within(conc_points(ss, sel.step_size), sel.min_conc, sel.max_conc, only)


def _apply_evals(out: list[dict], origin: list[str], sel: Selection):
    mode = sel.evals
    if mode == "none":  # fixed-seq-len rows carry run-eval: false from the builders
        return list(zip(origin, out, strict=True))
    if mode == "default" and not sel.all_evals:
        evals.mark(out, include_agentic=False)
        return list(zip(origin, out, strict=True))
    evals.mark(out, include_agentic=True)
    pairs = [(origin[i], row) for i, row in (evals.mark_all(out) if sel.all_evals
                                             else enumerate(out))]
    kept = [(k, row) for k, row in pairs if row.get("run-eval")]
    for _, row in kept:
        row["eval-only"] = True
    return kept
