"""`recipe check`: templates and rendered recipes, each against its own schema and rules."""

from __future__ import annotations

from infersweep.diagnostics import Diagnostic
from infersweep.recipe import schema, template, topology
from infersweep.recipe.render import check_template
from infersweep.recipe.yamlwalk import diag_at, scalars
from infersweep.yamldoc import YamlDoc

KINDS = ("auto", "template", "recipe")


def kind_of(doc: YamlDoc) -> str:
    """A rendered recipe has a benchmark command and no placeholders; anything else is a template."""
    data = doc.data if isinstance(doc.data, dict) else {}
    bench = data.get("benchmark")
    has_command = isinstance(bench, dict) and "command" in bench
    has_placeholders = any(template.placeholders(s) for s in scalars(doc) if not s.is_key)
    return "recipe" if has_command and not has_placeholders else "template"


def check_recipe(doc: YamlDoc) -> list[Diagnostic]:
    if not isinstance(doc.data, dict):
        return [Diagnostic(doc.path, 1, 1, "a recipe must be a YAML mapping", rule="recipe")]
    out = schema.validate(doc, schema.RECIPE_SCHEMA) + topology.check(doc, doc.data)
    for s in scalars(doc):
        if s.is_key:
            continue
        for whole, _ in template.placeholders(s):
            out.append(diag_at(doc, s, whole, f"unfilled placeholder '{whole}'",
                               "render the template first", "recipe-placeholder"))
        if s.pointer != ("benchmark", "command"):
            continue
        for m in template.LOOP.finditer(s.text):
            if not template.is_conc_loop(m):
                continue
            out.append(diag_at(doc, s, m.group(0), "the benchmark command loops over "
                               f"concurrencies ('{m.group(0).strip()}')",
                               "render the recipe from its matrix row: `infersweep recipe "
                               "render` writes one client invocation per point",
                               "recipe-concurrency"))
    return sorted(set(out))


def check(doc: YamlDoc, kind: str = "auto") -> tuple[str, list[Diagnostic]]:
    kind = kind_of(doc) if kind == "auto" else kind
    return kind, (check_template(doc) if kind == "template" else check_recipe(doc))
