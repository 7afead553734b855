"""Checks that only a template needs: placeholders, no concurrency, no benchmark command."""

from __future__ import annotations

import json
import re
from functools import cache
from importlib import resources

from infersweep.diagnostics import Diagnostic, did_you_mean
from infersweep.recipe import rowexpr
from infersweep.recipe.yamlwalk import Scalar, diag_at, scalars
from infersweep.yamldoc import YamlDoc

PLACEHOLDER = re.compile(r"\{\{\s*(.*?)\s*\}\}")

_CONC_KEY = re.compile(r"(?i)^(max[-_]?)?conc(urrenc(y|ies))?([-_](list|values|mult))?$")
LOOP = re.compile(r"\bfor\s+(\w+)\s+in\s+([^;\n]*)")
_CONC_TEXT = [
    (LOOP, "holds a loop over concurrencies"),
    (re.compile(r"--(max-)?concurrency\b"), "sets a concurrency flag"),
    (re.compile(r"\$\{?CONC(_LIST)?\b"), "uses a concurrency variable"),
]
_CONC_HINT = ("concurrencies come from the matrix row's conc list; the renderer writes one "
              "client invocation per point")


def is_conc_loop(match: re.Match) -> bool:
    var, words = match.group(1), match.group(2)
    return ("conc" in var.lower() or "conc" in words.lower()
            or bool(re.fullmatch(r"[\s\d]+", words)))


ROW_SETTINGS = "row-settings"  # the rules of rowrules, which may name the concurrency


def server_scalars(doc: YamlDoc):
    """The scalars of the template's server description (its ``row-settings`` left out)."""
    return (s for s in scalars(doc) if not s.pointer or s.pointer[0] != ROW_SETTINGS)


def concurrency_literals(doc: YamlDoc) -> list[Diagnostic]:
    """A template holds no concurrency: no such key, no loop over points, no flag or variable
    (a setting that depends on it is a ``row-settings`` rule)."""
    out = []
    for s in server_scalars(doc):
        if s.is_key and _CONC_KEY.match(s.text):
            out.append(doc.diag(s.pointer, f"the template sets a concurrency ('{s.text}')",
                                _CONC_HINT, rule="template-concurrency", key=True))
            continue
        if s.is_key:
            continue
        for pattern, what in _CONC_TEXT:
            for m in pattern.finditer(s.text):
                if pattern is LOOP and not is_conc_loop(m):
                    continue
                out.append(diag_at(doc, s, m.group(0), f"the template {what} "
                                   f"('{m.group(0).strip()}')", _CONC_HINT,
                                   "template-concurrency"))
    return out


@cache
def row_fields() -> dict[str, str]:
    """Dotted field -> JSON type of every scalar field a matrix row can hold."""
    schema = json.loads(resources.files("infersweep.schemas")
                        .joinpath("matrix-row.schema.json").read_text())
    fields: dict[str, str] = {}

    def visit(prefix: str, node: dict) -> None:
        if "$ref" in node:
            node = schema["$defs"][node["$ref"].rsplit("/", 1)[-1]]
        if node.get("type") == "object" or "properties" in node:
            for name, sub in node.get("properties", {}).items():
                visit(f"{prefix}{name}.", sub)
        else:
            fields[prefix.rstrip(".")] = node.get("type", "scalar")

    visit("", schema)
    return fields


def as_text(value) -> str:
    """A row value inside a longer string: booleans as YAML writes them (``dpatrue``)."""
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


def placeholders(s: Scalar) -> list[tuple[str, str]]:
    """(whole placeholder text, inner expression) for every ``{{ ... }}`` in a scalar."""
    return [(m.group(0), m.group(1)) for m in PLACEHOLDER.finditer(s.text)]


def known_field(field: str) -> bool:
    """A field a template may read: the matrix row's, or one derived from it (rowexpr)."""
    return (field in row_fields() or field == rowexpr.GPU
            or (field.startswith(rowexpr.SETTING) and len(field) > len(rowexpr.SETTING)))


def field_problem(field: str) -> tuple[str, str] | None:
    """(message, hint) when a placeholder cannot read ``field`` (the concurrency is the
    caller's to allow or refuse before asking)."""
    if not known_field(field):
        return (f"'{field}' is not a field of a matrix row",
                did_you_mean(field, row_fields()) or "see schemas/matrix-row.schema.json")
    if row_fields().get(field) in ("array", "object"):
        return f"'{field}' is not a single value", "placeholders take strings, numbers or booleans"
    return None


def placeholder_problems(doc: YamlDoc) -> list[Diagnostic]:
    """Placeholders must read scalar fields of the matrix row, and never its concurrency."""
    out = []
    for s in server_scalars(doc):
        for whole, inner in placeholders(s):
            if s.is_key:
                out.append(diag_at(doc, s, whole, "a placeholder cannot be a key",
                                   "use placeholders in values only", "template-placeholder"))
                continue
            if not rowexpr.is_expression(inner):
                out.append(diag_at(doc, s, whole, f"placeholder '{whole}' is not of the form "
                                   f"{{{{ row.FIELD }}}} or {rowexpr.FORMS}",
                                   "e.g. {{ row.image }}", "template-placeholder"))
                continue
            for field in rowexpr.fields(inner):
                if field == "conc" or field.endswith(".conc"):
                    out.append(diag_at(doc, s, whole, "the template holds a concurrency "
                                       f"('{whole}')", _CONC_HINT, "template-concurrency"))
                elif (problem := field_problem(field)) is not None:
                    out.append(diag_at(doc, s, whole, *problem, "template-placeholder"))
    return out


def settings_read(doc: YamlDoc) -> frozenset[str]:
    """The ``additional-settings`` names the template reads (``row.setting.NAME`` in a
    placeholder, ``setting.NAME`` in a rule's condition): the settings it acts on."""
    names = set()
    for s in scalars(doc):
        found = ([s.text] if s.is_key else
                 [f for _, inner in placeholders(s) for f in rowexpr.fields(inner)])
        names.update(f[len(rowexpr.SETTING):] for f in found if f.startswith(rowexpr.SETTING))
    return frozenset(names)


def benchmark_command(doc: YamlDoc) -> list[Diagnostic]:
    bench = doc.data.get("benchmark") if isinstance(doc.data, dict) else None
    if isinstance(bench, dict) and "command" in bench:
        return [doc.diag(("benchmark", "command"), "a template must not hold the benchmark "
                         "command", "remove it: `infersweep recipe render` generates it from "
                         "the matrix row", rule="template-benchmark", key=True)]
    return []
