"""JSON Schema validation of YAML documents, reported at the offending line and column."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from infersweep.diagnostics import Diagnostic, did_you_mean
from infersweep.yamldoc import YamlDoc

_TYPE_NAMES = {"integer": "an integer", "string": "a string", "boolean": "true or false",
               "array": "a list", "object": "a mapping", "number": "a number"}


@cache
def load_schema(name: str) -> dict:
    """The schema ``infersweep/schemas/<name>.schema.json``."""
    text = resources.files("infersweep.schemas").joinpath(f"{name}.schema.json").read_text()
    return json.loads(text)


def _is_integer(checker, instance) -> bool:
    """Integers only: JSON Schema counts 8.0 as an integer, and a float ``tp`` would reach
    the matrix rows and the launcher as ``8.0``."""
    return isinstance(instance, int) and not isinstance(instance, bool)


@cache
def _validator(name: str):
    from jsonschema import Draft202012Validator, validators
    from referencing import Registry, Resource

    schema = load_schema(name)
    registry = Registry()
    for other in resources.files("infersweep.schemas").iterdir():
        if other.name.endswith(".schema.json"):
            contents = json.loads(other.read_text())
            registry = registry.with_resource(contents["$id"], Resource.from_contents(contents))
    strict = validators.extend(
        Draft202012Validator,
        type_checker=Draft202012Validator.TYPE_CHECKER.redefine("integer", _is_integer))
    return strict(schema, registry=registry)


def _describe(value: Any) -> str:
    try:
        text = json.dumps(value, default=str)
    except (TypeError, ValueError):  # keys JSON cannot hold (a date), or a shared node
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _leaf_errors(error):
    """The most specific errors under an if/then/else or $ref wrapper."""
    if error.context:
        for sub in error.context:
            yield from _leaf_errors(sub)
    else:
        yield error


def _field_name(pointer: tuple) -> str:
    if not pointer:
        return "document"
    if isinstance(pointer[-1], int) and len(pointer) > 1:
        return f"{pointer[-2]}[{pointer[-1]}]"
    return str(pointer[-1])


def _false_schema_key(instance: Any, pointer: tuple, value: Any) -> Any:
    """The key a ``false`` subschema refused. jsonschema reports such an error at the parent
    object, so it is found as the one key of the parent that holds ``value``."""
    parent = instance
    for part in pointer:
        try:
            parent = parent[part]
        except (KeyError, IndexError, TypeError):
            return None
    if not isinstance(parent, dict):
        return None
    keys = [k for k, v in parent.items() if v is value]
    return keys[0] if len(keys) == 1 else None


def _to_diagnostic(doc: YamlDoc, error, base: tuple, instance: Any = None) -> Diagnostic:
    pointer = base + tuple(error.absolute_path)
    validator, inst = error.validator, error.instance
    if error.schema is False:
        key = _false_schema_key(instance, tuple(error.absolute_path), inst)
        if key is not None:
            pointer += (key,)
        return doc.diag(pointer, f"'{_field_name(pointer)}' is not allowed here",
                        "remove it", rule="schema", key=True)
    field = _field_name(pointer)
    if validator == "additionalProperties":
        allowed = list(error.schema.get("properties", {}))
        extras = [k for k in inst if k not in error.schema.get("properties", {})]
        key = extras[0] if extras else "?"
        hint = did_you_mean(key, allowed) or (
            f"allowed keys: {', '.join(allowed)}" if allowed else "remove it")
        return doc.diag(pointer + (key,), f"unknown key '{key}'", hint, rule="schema", key=True)
    if validator == "required":
        missing = error.message.split("'")[1] if "'" in error.message else error.message
        return doc.diag(pointer, f"missing required key '{missing}'", f"add '{missing}:'",
                        rule="schema", key=True)
    if validator == "type":
        want = error.validator_value
        want = want if isinstance(want, str) else want[0]
        hint = ""
        if want == "integer" and isinstance(inst, float) and inst.is_integer():
            hint = f"write {int(inst)}: sizes, lengths and concurrencies are whole numbers"
        return doc.diag(pointer, f"'{field}' must be {_TYPE_NAMES.get(want, want)}, "
                        f"got {_describe(inst)}", hint, rule="schema")
    if validator == "not" and error.validator_value == {}:
        # a field allowed only under a condition, written in the schema as
        # {"not": {}, "description": <what it needs>, "x-hint": <what to do>}
        reason = error.schema.get("description", "is not allowed here")
        return doc.diag(pointer, f"'{field}' {reason}", error.schema.get("x-hint", "remove it"),
                        rule="schema", key=True)
    if validator == "minimum":
        return doc.diag(pointer, f"'{field}' must be at least {error.validator_value}, "
                        f"got {_describe(inst)}", rule="schema")
    if validator == "enum":
        choices = ", ".join(json.dumps(c) for c in error.validator_value)
        return doc.diag(pointer, f"'{field}' is {_describe(inst)}, expected one of {choices}",
                        did_you_mean(inst, error.validator_value), rule="schema")
    if validator == "const":
        return doc.diag(pointer, f"'{field}' must be {json.dumps(error.validator_value)} here, "
                        f"got {_describe(inst)}", error.schema.get("description", ""), rule="schema")
    if "propertyNames" in error.schema_path or validator == "propertyNames":
        return doc.diag(pointer + (inst,), f"key {_describe(inst)} contains a glob character",
                        "'*', '?', '[' and ']' are reserved for changelog globs", rule="schema",
                        key=True)
    if validator == "pattern" and len(pointer) > 1 and pointer[-2] == "additional-settings":
        return doc.diag(pointer, f"setting {_describe(inst)} is not of the form KEY=VALUE with a "
                        "shell-safe KEY", "KEY must match [A-Za-z_][A-Za-z0-9_]*", rule="schema")
    if validator == "pattern" and field == "pr-link":
        return doc.diag(pointer, f"pr-link '{inst}' is not a pull-request URL",
                        "use https://github.com/<owner>/<repo>/pull/<number>, or the "
                        "placeholder XXX until the pull request exists", rule="schema")
    if validator == "pattern" and field == "version":
        return doc.diag(pointer, "a component version must not be an image reference",
                        "give a release or commit SHA", rule="schema")
    if validator in ("minItems", "minProperties"):
        return doc.diag(pointer, f"'{field}' must not be empty", rule="schema")
    return doc.diag(pointer, error.message, rule="schema")


def validate_doc(doc: YamlDoc, schema_name: str, *, data: Any = None,
                 base: tuple = ()) -> list[Diagnostic]:
    """Every schema violation in ``doc`` (or in ``data``, a part of it found at ``base``)."""
    instance = doc.data if data is None else data
    leaves = [leaf for error in _validator(schema_name).iter_errors(instance)
              for leaf in _leaf_errors(error)]
    misspelt = {(tuple(e.absolute_path), k) for e in leaves if e.validator == "additionalProperties"
                for k in e.instance if k not in e.schema.get("properties", {})}
    diags = _key_type_diagnostics(doc) if data is None else []
    for leaf in leaves:
        if leaf.validator == "required" and any(
                path == tuple(leaf.absolute_path) and did_you_mean(key, leaf.validator_value)
                for path, key in misspelt):
            continue  # reported as "unknown key ... did you mean" instead
        if leaf.validator == "additionalProperties" and not any(
                isinstance(k, str) for k in leaf.instance
                if k not in leaf.schema.get("properties", {})):
            continue  # only keys that are not text: reported where they are, below
        diags.append(_to_diagnostic(doc, leaf, base, instance))
    return sorted(set(diags))


_KEY_KINDS = {"int": "a number", "float": "a number", "null": "null (no key)",
              "bool": "true or false (YAML reads yes, no, on and off as booleans)",
              "timestamp": "a date"}


def _key_type_diagnostics(doc: YamlDoc) -> list[Diagnostic]:
    """Keys YAML reads as something other than text (``123:``, ``yes:``, ``2024-01-01:``):
    every key in these files is a name, and later steps (globs, prefixes) need text."""
    return [Diagnostic(doc.path, k.line, k.col,
                       f"key {k.text or '(empty)'} is read as {_KEY_KINDS.get(k.tag, k.tag)}, "
                       "not as text", f"quote it: '{k.text}':", "key-type")
            for k in doc.non_string_keys]


def validate_data(instance: Any, schema_name: str) -> list[str]:
    """Plain messages for a JSON contract that has no source file (e.g. a matrix row)."""
    out = []
    for error in _validator(schema_name).iter_errors(instance):
        where = "/".join(str(p) for p in error.absolute_path) or "(root)"
        out.append(f"{where}: {error.message}")
    return out
