"""The compare page's data: what explains a moved number, beside the explorer's points.

The page compares the explorer's points (``explorer-data.js``) of two runs; this file adds
what only the runs' metadata can say, keyed by run (``<run id>-<attempt>``):

- each run's changelog entries (its ``changelog_metadata.json``), every distinct entry once;
- each recipe's text as a number: a recipe is a config, recipe name, recipe fingerprint and
  ISL/OSL with scale-down (the explorer's names), its text the one most of its runs staged;
  whether a run staged recipes at all;
- the ``infersweep recipe diff`` of two recipes one matched point could have been run with
  (same config, topology, ISL/OSL and scale-down): every two while a slot has few (up to
  ``MAX_PAIRS`` diffs), else the closest in time first, so a config whose fingerprint changes
  in every run cannot make the site grow with the square of the runs. As structured lines
  the page renders as ``recipe diff`` prints them; no recipe text itself is shipped.

A local job writes its own folder into its recipe (where the client saves its results), and
that folder differs in every run; it is written ``<job folder>`` before two texts are
compared, so a diff shows what changed in the recipe, not where it ran.
"""

from __future__ import annotations

import json

import orjson

from infersweep.diagnostics import InputError
from infersweep.recipe import diff as differ
from infersweep.report import datascript
from infersweep.report.explorerdata import seq_label
from infersweep.report.views import run_order
from infersweep.results.compare import METRICS as COMPARE_METRICS
from infersweep.store.model import StagedRun

FILE = "compare-data.js"
GLOBAL = "INFERSWEEP_COMPARE_DATA"
VERSION = 1
JOB_FOLDER = "<job folder>"
_TOKEN_EDGE = frozenset(" \t\n\r'\"=")  # what ends a path written in a recipe
_PATH_END = _TOKEN_EDGE | {"/"}
MAX_PAIRS = 300  # diffs per slot at most (all pairs up to 25 recipes)
FP_CHARS = 16  # of a recipe fingerprint name it among its config's (all of it if they must)
# the compared metrics: the explorer's point column -> `results compare`'s metric, whose
# heading, direction and regression threshold (percent) apply where there is no noise band
METRICS = {"tput": "tput_per_gpu", "tput_out": "output_tput_per_gpu", "intvty": "median_intvty",
           "ttft50": "median_ttft", "ttft99": "p99_ttft"}


def run_key(run: StagedRun) -> str:
    """The explorer's name for a run: ``<run id>-<attempt>``."""
    return f"{run.run_id}-{run.attempt}"


def changelog_entries(meta: dict | None) -> list[dict]:
    """A run's changelog entries as pages show them: config keys, description lines, PR link
    and every other field as (name, text) pairs; anything malformed is left out."""
    entries = (meta or {}).get("entries") or []
    out = []
    for e in entries if isinstance(entries, list) else []:
        if not isinstance(e, dict):
            continue
        desc = e.get("description")
        desc = [str(d) for d in desc] if isinstance(desc, list) else (
            [] if desc is None else [str(desc)])
        keys = e.get("config-keys")
        keys = [str(k) for k in keys] if isinstance(keys, list) else []
        other = [(str(k), str(v)) for k, v in sorted(e.items(), key=lambda kv: str(kv[0]))
                 if k not in ("config-keys", "description", "pr-link")]
        out.append({"config_keys": keys, "description": desc, "pr_link": e.get("pr-link"),
                    "other": other})
    return out


def _refs(meta: dict | None) -> str:
    if not isinstance(meta, dict):
        return ""
    if isinstance(meta.get("dispatch"), dict):
        return "manual dispatch: " + json.dumps(meta["dispatch"], sort_keys=True)
    base, head = meta.get("base_ref"), meta.get("head_ref")
    return f"{base or '?'} → {head or '?'}" if base or head else ""


def job_folder_free(text: str, config_key: str, recipe_name: str) -> str:
    """``text`` with every path to the job's own folder (``…/<config key>/<recipe name>``)
    written ``<job folder>``."""
    needle, parts, done = f"/{config_key}/{recipe_name}", [], 0
    at = text.find(needle)
    while at >= 0:
        end = at + len(needle)
        if end == len(text) or text[end] in _PATH_END:
            start = at
            while start > done and text[start - 1] not in _TOKEN_EDGE:
                start -= 1
            parts += [text[done:start], JOB_FOLDER]
            done = end
        at = text.find(needle, end)
    return "".join(parts) + text[done:] if parts else text


class _Texts:
    """Distinct recipe texts (after :func:`job_folder_free`) numbered as first seen."""

    def __init__(self):
        self.ids: dict[str, int] = {}
        self.texts: list[str] = []

    def id_of(self, recipe: dict) -> int:
        text = job_folder_free(recipe["text"], recipe["config_key"], recipe["recipe_name"])
        n = self.ids.get(text)
        if n is None:
            n = self.ids[text] = len(self.texts)
            self.texts.append(text)
        return n


def _parsed(text: str) -> dict | str:
    """A recipe text as ``recipe diff`` reads it, or why it cannot be read."""
    from infersweep.yamldoc import parse_yaml

    try:
        data = parse_yaml(text, "recipe").data
    except InputError as exc:
        return str(exc.diagnostics[0])
    return data if isinstance(data, dict) else "a recipe must be a YAML mapping"


def _diff(a: dict | str, b: dict | str, sections_of) -> list | dict:
    """``recipe diff`` of two parsed recipes as [section, key, A, B] lines (A or B None when
    unset), or {"error": why} when one could not be read."""
    for doc in (a, b):
        if isinstance(doc, str):
            return {"error": doc}
    return [[d.section, d.key, None if d.a is differ.ABSENT else differ.show(d.a),
             None if d.b is differ.ABSENT else differ.show(d.b)]
            for d in differ.differences(a, b, sections_of)]


def _keys(p: dict) -> tuple[tuple, tuple] | None:
    """(the slot a point is matched in but its concurrency, as `results compare` matches;
    its recipe as the page names it: config, recipe and the explorer's ISL/OSL, and the
    fingerprint)."""
    if not p.get("successful", True) or p.get("isl") is None or p.get("osl") is None:
        return None
    seq = seq_label(p["isl"], p["osl"], p.get("scale_down") or 1)
    slot = (p.get("config_key"), p.get("topology") or p.get("recipe_name"), seq)
    name = "\n".join([str(p.get("config_key")), str(p.get("recipe_name")), seq])
    return slot, (name, str(p.get("recipe_fingerprint") or ""))


def _pairs(ids: list[int]) -> list[tuple[int, int]]:
    """Which of a slot's recipes (oldest first) are diffed: every two when there are few;
    else the closest in time first, up to MAX_PAIRS (each with the next always)."""
    out = []
    for gap in range(1, len(ids)):
        if gap > 1 and len(out) + len(ids) - gap > MAX_PAIRS:
            break
        out += [(ids[i], ids[i + gap]) for i in range(len(ids) - gap)]
    return out


def _recipes(ordered: list[StagedRun]) -> tuple[dict, dict]:
    """(recipe name -> text number, diffs); see the module docstring."""
    texts = _Texts()
    counts: dict[tuple, dict[int, int]] = {}  # recipe -> text -> runs that ran it
    slots: dict[tuple, list[tuple]] = {}      # slot -> its recipes, oldest first
    for run in ordered:
        mine = {(r["config_key"], r["recipe_name"]): r for r in run.recipes}
        seen = set()
        for p in run.points:
            keys = _keys(p)
            r = mine.get((p.get("config_key"), p.get("recipe_name")))
            if keys is None or r is None or keys[1] in seen:
                continue
            seen.add(keys[1])
            n = texts.id_of(r)
            counts.setdefault(keys[1], {}).setdefault(n, 0)
            counts[keys[1]][n] += 1
            if keys[1] not in slots.setdefault(keys[0], []):
                slots[keys[0]].append(keys[1])
    # a recipe's text: the one most of its runs ran (the newest of equals)
    chosen = {k: max(ids, key=lambda n: (ids[n], n)) for k, ids in counts.items()}
    diffs, parsed, reduced = {}, {}, {}

    def sections_of(doc: dict) -> dict:  # each recipe reduced once, however many pairs
        if id(doc) not in reduced:
            reduced[id(doc)] = differ.sections(doc)
        return reduced[id(doc)]

    for names in slots.values():
        ids = list(dict.fromkeys(chosen[k] for k in names))
        for a, b in _pairs(ids):
            key = f"{min(a, b)} {max(a, b)}"
            if key in diffs:
                continue
            for n in (a, b):
                if n not in parsed:
                    parsed[n] = _parsed(texts.texts[n])
            lo, hi = sorted((a, b))
            diffs[key] = _diff(parsed[lo], parsed[hi], sections_of)
    named: dict[str, dict[str, int]] = {}
    for (name, fp), n in sorted(chosen.items()):
        named.setdefault(name, {})[fp] = n
    for name, fps in named.items():  # short where the prefixes tell them apart
        if len({fp[:FP_CHARS] for fp in fps}) == len(fps):
            named[name] = {fp[:FP_CHARS]: n for fp, n in fps.items()}
    return named, diffs


def arrange(runs: list[StagedRun]) -> dict:
    """The data object (see the module docstring)."""
    ordered = sorted(runs, key=run_order)
    entries: list[dict] = []
    seen: dict[bytes, int] = {}
    per_run = {}
    for run in ordered:
        raw = (run.changelog or {}).get("entries") if isinstance(run.changelog, dict) else None
        raw = [e for e in raw if isinstance(e, dict)] if isinstance(raw, list) else []
        ids = []
        for e, shown in zip(raw, changelog_entries({"entries": raw}), strict=True):
            ident = orjson.dumps(e, option=orjson.OPT_SORT_KEYS)
            if ident not in seen:
                seen[ident] = len(entries)
                entries.append(shown)
            ids.append(seen[ident])
        per_run[run_key(run)] = {"changelog": ids, "refs": _refs(run.changelog),
                                 "recipes": bool(run.recipes)}
    recipes, diffs = _recipes(ordered)
    metrics = {m: {"label": COMPARE_METRICS[c][0], "higher": COMPARE_METRICS[c][1],
                   "threshold": COMPARE_METRICS[c][2]} for m, c in METRICS.items()}
    return {"version": VERSION, "metrics": metrics, "metric_order": list(METRICS),
            "fp_chars": FP_CHARS,
            "runs": per_run, "entries": entries,
            "recipes": recipes, "diffs": diffs}


def script(data: dict) -> str:
    """``data`` as the script the page loads."""
    return datascript.script(GLOBAL, data)


def load_script(text: str) -> dict:
    """The data object back from :func:`script`'s text (for tests and tools)."""
    return datascript.load(GLOBAL, text, "a compare data file")
