"""Framework and precision values: a near miss of a known value is a typo.

Nothing in the tools dispatches on these values (they label rows, recipes and results), so
there is no list to check them against. A value is compared with what is known: the values
the catalog's other entries use, the parts of its config keys (which name framework and
precision by convention), and for frameworks the engines the recipe dialect runs
(``backend.type`` in the srt-slurm recipe schema). A framework is a name of dash-separated
parts (``sglang-disagg``, ``dynamo-vllm``). A value with a part that is a near miss of a
better-known part (``dissag``, ``fp88`` where ``fp8`` is known) is an error with the
corrected value and the known values; a value unlike any known one is new and passes (a new
framework needs a recipe template: docs/adding-a-config.md).
"""

from __future__ import annotations

import difflib
from collections import Counter
from functools import cache

from infersweep.config.schema import load_schema
from infersweep.diagnostics import Diagnostic
from infersweep.yamldoc import YamlDoc

FIELDS = ("framework", "precision")
NEAR_MISS = 0.8  # difflib ratio: 'dissag'~'disagg' 0.83, 'fp88'~'fp8' 0.86, 'fp8'~'fp4' 0.67


# a catalog spells an engine as InferenceX's framework names do (TensorRT-LLM is 'trt')
_FRAMEWORK_NAME = {"trtllm": "trt"}


@cache
def recipe_engines() -> tuple[str, ...]:
    """The engines the recipe dialect runs (the values its schema allows for backend.type),
    as a catalog's ``framework`` names them."""
    spec = load_schema("srt-slurm-v1-recipe")["$defs"]["backend"]["properties"]["type"]
    values = spec.get("enum") or ([spec["const"]] if "const" in spec else [])
    return tuple(_FRAMEWORK_NAME.get(str(v), str(v)) for v in values)


def _corrected(value: str, support: Counter) -> str | None:
    """``value`` with each part replaced by a near miss that is better attested (more
    entries' values and config keys use it), if any part has one. Between two values used
    once each (``atom-disagg``, ``sglang-dissag``) the config keys decide: a key says
    ``sglang-disagg``, none says ``dissag``."""
    fixed, changed = [], False
    for part in value.split("-"):
        better = sorted(p for p, n in support.items() if n > support[part] and p != part)
        close = difflib.get_close_matches(part, better, n=1, cutoff=NEAR_MISS)
        fixed.append(close[0] if close else part)
        changed |= bool(close)
    return "-".join(fixed) if changed else None


def check_values(entries: dict[str, dict], sources: dict[str, YamlDoc]
                 ) -> tuple[list[Diagnostic], set[tuple[str, str]]]:
    """(errors, the (key, field) pairs they report) for every entry's framework and
    precision."""
    typos: set[tuple[str, str]] = set()
    errors: list[Diagnostic] = []
    counts = {f: Counter(e.get(f) for e in entries.values() if isinstance(e, dict)
                         and isinstance(e.get(f), str)) for f in FIELDS}
    key_parts = Counter(p for k in entries for p in str(k).split("-"))
    support = {}
    for f in FIELDS:
        support[f] = Counter(key_parts)
        for v, n in counts[f].items():
            for p in v.split("-"):
                support[f][p] += n
    for engine in recipe_engines():
        support["framework"][engine] += 1
    for key, entry in entries.items():
        if not isinstance(entry, dict):
            continue
        for field in FIELDS:
            value = entry.get(field)
            if not isinstance(value, str):
                continue
            others = {v for v, n in counts[field].items() if v != value or n > 1}
            if field == "framework":
                others |= set(recipe_engines())
            if value in others:
                continue
            listed = ", ".join(sorted(others)) or "none yet"
            fix = _corrected(value, support[field])
            users = "no other entry" + (" and no recipe engine" if field == "framework" else "")
            if fix is not None:
                typos.add((key, field))
                rule = "unknown-framework" if field == "framework" else "unknown-precision"
                errors.append(sources[key].diag(
                    (key, field), f"{field} '{value}' is unknown: {users} uses it "
                    f"(known: {listed})", f"did you mean '{fix}'?", rule=rule))
    return errors, typos
