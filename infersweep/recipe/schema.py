"""JSON Schema checks for recipes and templates, reported at the offending line and column."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from infersweep.diagnostics import Diagnostic, did_you_mean
from infersweep.yamldoc import YamlDoc

RECIPE_SCHEMA = "srt-slurm-v1-recipe"
TEMPLATE_SCHEMA = "srt-slurm-v1-template"

_TYPES = {"integer": "an integer", "string": "a string", "boolean": "true or false",
          "array": "a list", "object": "a mapping", "number": "a number", "null": "null"}
_RESERVED_HINT = {
    "frontend": "srtctl passes --backend atom to AToMesh itself; remove the key",
    "engine": "srtctl sets model, host, server-port, tp and kv-transfer-config for every "
              "ATOM worker; remove the key",
}


@cache
def _validator(name: str):
    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource

    registry = Registry()
    schema = None
    for item in resources.files("infersweep.schemas").iterdir():
        if item.name.endswith(".schema.json"):
            contents = json.loads(item.read_text())
            registry = registry.with_resource(contents["$id"], Resource.from_contents(contents))
            if item.name == f"{name}.schema.json":
                schema = contents
    if schema is None:
        raise LookupError(f"no schema {name}")
    return Draft202012Validator(schema, registry=registry)


def _show(value: Any) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def _leaves(error):
    if error.context:
        for sub in error.context:
            yield from _leaves(sub)
    else:
        yield error


def _type_names(want) -> str:
    wants = [want] if isinstance(want, str) else list(want)
    return " or ".join(_TYPES.get(w, w) for w in wants)


def _diagnostic(doc: YamlDoc, error) -> Diagnostic:
    pointer = tuple(error.absolute_path)
    v, inst, sch = error.validator, error.instance, error.schema
    field = str(pointer[-1]) if pointer else "document"
    where = ".".join(str(p) for p in pointer) or "the document"
    if v == "additionalProperties":
        allowed = list(sch.get("properties", {}))
        extras = [k for k in inst if k not in sch.get("properties", {})]
        key = extras[0] if extras else "?"
        hint = did_you_mean(key, allowed) or (
            f"allowed keys here: {', '.join(allowed)}" if allowed else "remove it")
        return doc.diag(pointer + (key,), f"unknown key '{key}' in {where}", hint,
                        rule="schema", key=True)
    if v == "required":
        missing = error.message.split("'")[1] if "'" in error.message else error.message
        return doc.diag(pointer, f"missing required key '{missing}' in {where}",
                        f"add '{missing}:'", rule="schema", key=True)
    if v == "type":
        hint = "quote the value" if error.validator_value == "string" else ""
        return doc.diag(pointer, f"'{field}' must be {_type_names(error.validator_value)}, "
                        f"got {_show(inst)}", hint, rule="schema")
    if v == "const":
        return doc.diag(pointer, f"'{field}' must be {json.dumps(error.validator_value)}, "
                        f"got {_show(inst)}", sch.get("description", ""), rule="schema")
    if v == "enum":
        choices = ", ".join(json.dumps(c) for c in error.validator_value)
        return doc.diag(pointer, f"'{field}' is {_show(inst)}, expected one of {choices}",
                        did_you_mean(inst, [c for c in error.validator_value if c]),
                        rule="schema")
    if v == "minimum":
        return doc.diag(pointer, f"'{field}' must be at least {error.validator_value}, "
                        f"got {_show(inst)}", rule="schema")
    if v == "minLength":
        return doc.diag(pointer, f"'{field}' must not be empty", rule="schema")
    if v == "pattern":
        return doc.diag(pointer, f"'{field}' is {_show(inst)}, which does not match "
                        f"{error.validator_value}", sch.get("description", ""), rule="schema")
    if v == "anyOf":
        return doc.diag(pointer, f"'{field}' must be a string, number, true/false, or a list of "
                        f"them, got {_show(inst)}", rule="schema")
    return doc.diag(pointer, error.message, rule="schema")


def validate(doc: YamlDoc, schema_name: str, data: Any = None) -> list[Diagnostic]:
    """Every violation of ``schema_name`` in ``doc`` (or in ``data``, shaped like ``doc``)."""
    instance = doc.data if data is None else data
    diags = set()
    for error in _validator(schema_name).iter_errors(instance):
        if error.validator == "anyOf" and _is_value_union(error):
            diags.add(_diagnostic(doc, error))
            continue
        for leaf in _leaves(error):
            if leaf.validator == "propertyNames" or "propertyNames" in leaf.schema_path:
                diags.add(_key_name(doc, leaf))
            else:
                diags.add(_diagnostic(doc, leaf))
    return sorted(diags)


def _is_value_union(error) -> bool:
    return all(sub.validator == "type" or sub.validator == "$ref" for sub in error.context)


def _key_name(doc: YamlDoc, error) -> Diagnostic:
    """A key rejected by ``propertyNames`` (the error's instance is the key itself)."""
    pointer = tuple(error.absolute_path)
    key = error.instance
    where = ".".join(str(p) for p in pointer) or "the document"
    if error.validator == "not":
        section = "frontend" if pointer[:1] == ("frontend",) else "engine"
        return doc.diag(pointer + (key,), f"'{key}' is managed by srtctl and cannot be set "
                        f"in {where}", _RESERVED_HINT[section], rule="schema", key=True)
    if pointer and (str(pointer[-1]).endswith("environment") or pointer[-1] == "env"):
        hint = "an environment variable name: letters, digits and '_', not starting with a digit"
    else:
        hint = "letters, digits, '-', '_' and '.'"
    return doc.diag(pointer + (key,), f"key {_show(key)} is not a valid name in {where}", hint,
                    rule="schema", key=True)
