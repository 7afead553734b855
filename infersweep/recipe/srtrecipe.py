"""A row rendered from a recipe of the srt-slurm checkout (``CONFIG_FILE`` not ours).

The recipe is taken as srtctl would submit it (one variant of an override file, see
``overrides``), with only its benchmark section replaced by the one generated from the row.
Its server side is the recipe's own, in whichever dialect it is written (sglang, vllm,
trtllm, ...): srtctl validates that at submit time (``recipe coverage --srtctl`` runs its
dry run); here the recipe must be one job whose topology matches the row.
"""

from __future__ import annotations

from infersweep.diagnostics import Diagnostic, InputError
from infersweep.recipe import overrides, srtfit, workload
from infersweep.recipe.lookup import Found, commit_of
from infersweep.recipe.rendered import SRT_SLURM, Rendered
from infersweep.yamldoc import YamlDoc, load_yaml

# a custom benchmark keeps where its client runs and its environment; the workload keys of
# the recipe's own benchmark (sa-bench's isl, osl, concurrencies, ...) give way to the row's
KEEP_BENCHMARK = ("client_placement", "client_dedicated_node", "colocate_with_frontend", "env")


def _locator(doc: YamlDoc, sections: tuple):
    """Diagnostics at a pointer of the variant: in the most specific section that sets it."""

    def has(pointer: tuple) -> bool:
        node = doc.data
        for part in pointer:
            if not isinstance(node, dict) or part not in node:
                return False
            node = node[part]
        return True

    def at(pointer: tuple, message: str, hint: str = "", rule: str = "row-fit") -> Diagnostic:
        for section in sections:
            if has(section + pointer):
                return doc.diag(section + pointer, message, hint, rule=rule, key=True)
        return doc.diag(sections[-1] if sections else (), message, hint, rule=rule, key=True)

    return at


def variant(doc: YamlDoc, found: Found) -> tuple[dict, tuple]:
    """The one recipe ``found`` names: (data, sections it comes from as pointers)."""
    data, value = doc.data, found.config_file
    if not isinstance(data, dict):
        raise InputError(Diagnostic(doc.path, 1, 1, "a recipe must be a YAML mapping",
                                    rule="recipe"))
    if not overrides.is_override_file(data):
        if found.selector is not None:
            raise InputError(doc.diag((), f"CONFIG_FILE={value}: the selector "
                                      f"'{found.selector}' needs an override file, and this "
                                      "one has no 'base:'", "drop the selector (srtctl would "
                                      "ignore it and run the whole file)",
                                      rule="recipe-selector"))
        return data, ((),)
    try:
        found_variants = overrides.variants(data, found.selector)
    except overrides.OverrideError as exc:
        raise InputError(doc.diag(exc.pointer, f"CONFIG_FILE={value}: {exc.message}",
                                  exc.hint or f"a selector is {overrides.SELECTOR_FORMS}",
                                  rule=exc.rule, key=bool(exc.pointer))) from None
    if len(found_variants) != 1:
        names = ", ".join(v.suffix for v in found_variants) or "none"
        raise InputError(doc.diag((), f"CONFIG_FILE={value} selects {len(found_variants)} "
                                  f"variants of the override file ({names}); a row runs one "
                                  "recipe", "add ':override_<x>' or ':zip_override_<x>[i]' "
                                  "to CONFIG_FILE", rule="recipe-selector"))
    (chosen,) = found_variants
    return chosen.data, tuple((s,) for s in chosen.sections)


def benchmark(old, work: workload.Workload, name: str, *, client: str,
              result_dir: str) -> dict:
    kept = {k: v for k, v in (old if isinstance(old, dict) else {}).items()
            if k in KEEP_BENCHMARK}
    return {"type": "custom",
            "command": workload.command(work, name, client=client, result_dir=result_dir),
            **kept}


def render(found: Found, row: dict, *, source: str, client: str,
           result_dir: str) -> Rendered:
    doc = load_yaml(found.path)
    data, sections = variant(doc, found)
    at = _locator(doc, sections)
    if "sweep" in data:
        raise InputError(at(("sweep",), f"CONFIG_FILE={found.config_file} is a sweep (one job "
                            "per combination); a row runs one recipe",
                            "name a recipe without 'sweep:'", "recipe-sweep"))
    name = data.get("name")
    if not isinstance(name, str) or not name:
        raise InputError(at(("name",), "the recipe has no name", "srtctl requires one",
                            "recipe"))
    problems = srtfit.check(row, data, at, source)
    if problems:
        raise InputError(problems)
    work = workload.from_row(row)
    data = dict(data)
    data["benchmark"] = benchmark(data.get("benchmark"), work, name, client=client,
                                  result_dir=result_dir)
    return Rendered(data, found.path, found.config_file, work, work.points(name),
                    source=SRT_SLURM, checkout=found.checkout,
                    commit=commit_of(found.checkout) if found.checkout else None)
