"""JSON Schema validation of YAML documents, reported at the offending line and column.

The one translator from jsonschema errors to located messages, for every schema in
``infersweep/schemas``. A subschema can word its own message with two annotations (editors
ignore ``x-`` keywords): ``x-message``, with ``{field}`` (the field's or key's name),
``{value}`` (what was given) and ``{where}`` (the mapping that holds it) filled in, and
``x-hint``, what to do. They word the failures a generic message says little about (a pattern,
a ``not``, an ``anyOf``): a wrong type, an empty value, a missing or unknown key keep the
generic message. A subschema with an ``x-message`` speaks for everything under it (an
``anyOf`` of value types is one message, not one per branch).

One mistake, one message: a mapping missing a key its ``if`` tests (``multinode``, or
``multi-node`` for it) reports that key only, not the errors of the branch the schema then
guessed; no message is jsonschema's own text, and none names a JSON pointer.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from infersweep.diagnostics import Diagnostic, did_you_mean
from infersweep.yamldoc import YamlDoc

_TYPE_NAMES = {"integer": "an integer", "string": "a string", "boolean": "true or false",
               "array": "a list", "object": "a mapping", "number": "a number", "null": "null"}


@cache
def load_schema(name: str) -> dict:
    """The schema ``infersweep/schemas/<name>.schema.json``."""
    text = resources.files("infersweep.schemas").joinpath(f"{name}.schema.json").read_text()
    return json.loads(text)


def _is_integer(checker, instance) -> bool:
    """Integers only: JSON Schema counts 8.0 as an integer, and a float ``tp`` or
    ``gpus_per_node`` would reach the matrix rows, the launcher and srtctl as ``8.0``."""
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


# failures whose generic message already says all there is; annotations do not replace it
_SELF_EXPLAINED = {"type", "minLength", "minItems", "minProperties", "required",
                   "additionalProperties"}


def _annotation(error, keyword: str) -> str:
    """The subschema's own ``x-message`` or ``x-hint`` for this failure, if it words one."""
    if not isinstance(error.schema, dict) or error.validator in _SELF_EXPLAINED:
        return ""
    return error.schema.get(keyword, "")


def _leaf_errors(error):
    """The most specific errors under an anyOf/oneOf wrapper, unless the wrapper's schema
    words the message itself (``x-message``)."""
    if error.context and not _annotation(error, "x-message"):
        for sub in error.context:
            yield from _leaf_errors(sub)
    else:
        yield error


def _description(error) -> str:
    """The schema's own description of a field, as a hint."""
    return error.schema.get("description", "").rstrip(".")


def _field_name(pointer: tuple) -> str:
    """The name a reader finds: 'tp', 'conc-list[1]', 'item 1' (a top-level list item),
    'the document' (never a JSON pointer such as '0')."""
    if not pointer:
        return "the document"
    if isinstance(pointer[-1], int):
        if len(pointer) > 1:
            return f"{pointer[-2]}[{pointer[-1]}]"
        return f"item {pointer[-1] + 1}"
    return str(pointer[-1])


def _quoted(pointer: tuple) -> str:
    """The field's name quoted as a key ('tp'), or as prose where it is not a key."""
    name = _field_name(pointer)
    prose = not pointer or (len(pointer) == 1 and isinstance(pointer[0], int))
    return name if prose else f"'{name}'"


def _where(pointer: tuple) -> str:
    """The mapping at ``pointer`` as a reader finds it: ``cfg.scenarios.fixed-seq-len[0]``."""
    text = ""
    for part in pointer:
        text += f"[{part}]" if isinstance(part, int) else f".{part}"
    return text.lstrip(".") or "the document"


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


def _is_key_name(error) -> bool:
    """A key refused by ``propertyNames`` (the error's instance is the key itself)."""
    path = error.schema_path
    return len(path) >= 2 and path[-2] == "propertyNames"


def _under_condition(error) -> bool:
    return any(part in ("then", "else") for part in error.schema_path)


def _unknown_keys(error) -> list[str]:
    """The keys an ``additionalProperties: false`` refused (those that are text: any other
    key is reported as a key type)."""
    allowed = error.schema.get("properties", {})
    return [k for k in error.instance if k not in allowed and isinstance(k, str)]


def _located(error, base: tuple, instance: Any, key: Any) -> tuple[tuple, bool]:
    """Where an error is shown: (pointer, whether at the key rather than the value)."""
    pointer = base + tuple(error.absolute_path)
    if error.schema is False:
        key = _false_schema_key(instance, tuple(error.absolute_path), error.instance)
        return (pointer + (key,) if key is not None else pointer), True
    if _is_key_name(error):
        return pointer + (error.instance,), True
    if error.validator == "additionalProperties":
        key = key if key is not None else next(iter(_unknown_keys(error)), "?")
        return pointer + (key,), True
    return pointer, error.validator in ("required", "not")


def _message(error, pointer: tuple) -> tuple[str, str]:
    """(message, hint) for one leaf error located at ``pointer``."""
    validator, inst, want = error.validator, error.instance, error.validator_value
    field, where = _field_name(pointer), _where(pointer[:-1])
    quoted = _quoted(pointer)
    if _is_key_name(error):
        if validator == "not":
            return f"'{field}' is not allowed in {where}", "remove it"
        return f"key {_describe(inst)} is not a valid name in {where}", ""
    if error.schema is False or validator == "not":  # {"not": {}}: allowed only elsewhere
        return f"'{field}' is not allowed here", "remove it"
    if validator == "additionalProperties":
        allowed = list(error.schema.get("properties", {}))
        hint = did_you_mean(field, allowed) or (
            f"allowed keys here: {', '.join(allowed)}" if allowed else "remove it")
        return f"unknown key '{field}' in {where}", hint
    if validator == "required":
        missing = _missing_key(error)
        return f"missing required key '{missing}' in {_where(pointer)}", f"add '{missing}:'"
    if validator == "type":
        wants = [want] if isinstance(want, str) else list(want)
        hint = ""
        if "integer" in wants and isinstance(inst, float) and inst.is_integer():
            hint = f"write {int(inst)}: counts, sizes, lengths and concurrencies are whole numbers"
        elif "string" in wants and (inst is None or isinstance(inst, (bool, int, float))):
            hint = "quote the value"
        names = " or ".join(_TYPE_NAMES.get(w, w) for w in wants)
        return f"{quoted} must be {names}, got {_describe(inst)}", hint
    if validator == "enum":
        choices = ", ".join(json.dumps(c) for c in want)
        return (f"{quoted} is {_describe(inst)}, expected one of {choices}",
                did_you_mean(inst, [c for c in want if isinstance(c, str)]))
    if validator == "const":
        here = " here" if _under_condition(error) else ""
        return (f"{quoted} must be {json.dumps(want)}{here}, got {_describe(inst)}",
                _description(error))
    if validator == "pattern":
        return (f"{quoted} is {_describe(inst)}, which does not match {want}",
                _description(error))
    bounds = {"minimum": "at least", "exclusiveMinimum": "greater than", "maximum": "at most"}
    if validator in bounds:
        return f"{quoted} must be {bounds[validator]} {want}, got {_describe(inst)}", ""
    if validator in ("minItems", "minProperties", "minLength"):
        return f"{quoted} must not be empty", ""
    if validator == "uniqueItems":
        return f"{quoted} lists a value twice: {_describe(inst)}", ""
    return _worded_fallback(error, quoted)


def _worded_fallback(error, quoted: str) -> tuple[str, str]:
    """A failure no branch above words: never jsonschema's own text ("False schema does not
    allow", "is not valid under any of the given schemas", JSON pointers)."""
    validator, want = error.validator, error.validator_value
    hint = _description(error) if isinstance(error.schema, dict) else ""
    if validator == "oneOf":
        return f"{quoted} matches more than one of the allowed forms", hint or "keep one form"
    if validator in ("anyOf", "oneOf", "allOf"):
        return f"{quoted} has none of the allowed forms", hint
    sizes = {"maxItems": "items", "maxProperties": "keys", "maxLength": "characters"}
    if validator in sizes:
        return f"{quoted} has more than {want} {sizes[validator]}", hint
    if validator == "exclusiveMaximum":
        return f"{quoted} must be less than {want}, got {_describe(error.instance)}", hint
    if validator == "multipleOf":
        return f"{quoted} must be a multiple of {want}", hint
    if validator == "format":
        return f"{quoted} is not a valid {want}", hint
    if validator == "dependentRequired":
        return f"{quoted} is missing a key that goes with another", hint
    return f"{quoted} is not valid here ({validator})", hint


def _to_diagnostic(doc: YamlDoc, error, base: tuple, instance: Any = None,
                   key: Any = None) -> Diagnostic:
    """One located diagnostic for a leaf error (``key``: which unknown key, where several)."""
    pointer, at_key = _located(error, base, instance, key)
    message, hint = _message(error, pointer)
    if custom := _annotation(error, "x-message"):
        message = (custom.replace("{field}", _field_name(pointer))
                   .replace("{value}", _describe(error.instance))
                   .replace("{where}", _where(pointer[:-1])))
    return doc.diag(pointer, message, _annotation(error, "x-hint") or hint, rule="schema",
                    key=at_key)


def validate_doc(doc: YamlDoc, schema_name: str, *, data: Any = None,
                 base: tuple = ()) -> list[Diagnostic]:
    """Every schema violation in ``doc`` (or in ``data``, a part of it found at ``base``)."""
    instance = doc.data if data is None else data
    leaves = [leaf for error in _validator(schema_name).iter_errors(instance)
              for leaf in _leaf_errors(error)]
    misspelt = {(tuple(e.absolute_path), k) for e in leaves if e.validator == "additionalProperties"
                for k in _unknown_keys(e)}
    diags = _key_type_diagnostics(doc) if data is None else []
    undecided = _undecided_objects(leaves)
    for leaf in leaves:
        if _follows_from(leaf, undecided):
            continue  # a consequence of the missing key; its cause is reported instead
        if leaf.validator == "required" and any(
                path == tuple(leaf.absolute_path) and did_you_mean(key, leaf.validator_value)
                for path, key in misspelt):
            continue  # reported as "unknown key ... did you mean" instead
        if leaf.validator == "additionalProperties":  # one diagnostic per unknown key
            diags += [_to_diagnostic(doc, leaf, base, instance, k) for k in _unknown_keys(leaf)]
        else:
            diags.append(_to_diagnostic(doc, leaf, base, instance))
    return sorted(set(diags))


def _missing_key(error) -> str:
    return error.message.split("'")[1] if "'" in error.message else ""


def _undecided_objects(leaves) -> set[tuple]:
    """Mappings missing a key their schema's ``if`` tests (``multinode``, spelt
    ``multi-node``): which branch applies is unknown, so the branch's errors say nothing."""
    out = set()
    for leaf in leaves:
        if leaf.validator != "required" or not isinstance(leaf.schema, dict):
            continue
        cond = leaf.schema.get("if")
        if isinstance(cond, dict) and _missing_key(leaf) in (
                set(cond.get("properties") or {}) | set(cond.get("required") or [])):
            out.add(tuple(leaf.absolute_path))
    return out


def _follows_from(leaf, undecided: set[tuple]) -> bool:
    """Whether ``leaf`` comes from the ``then``/``else`` branch of an undecided mapping."""
    path = tuple(leaf.absolute_path)
    return any(path[:len(p)] == p and any(part in ("then", "else") for part in leaf.schema_path)
               for p in undecided)


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
    """Messages for a JSON contract that has no source file (e.g. a matrix row), in the same
    words as located ones: ``prefill: 'num-worker' must be at least 0, got -1``."""
    out = []
    for error in _validator(schema_name).iter_errors(instance):
        for leaf in _leaf_errors(error):
            keys = _unknown_keys(leaf) if leaf.validator == "additionalProperties" else [None]
            for key in keys:
                pointer, _ = _located(leaf, (), instance, key)
                message, hint = _message(leaf, pointer)
                if custom := _annotation(leaf, "x-message"):
                    message = (custom.replace("{field}", _field_name(pointer))
                               .replace("{value}", _describe(leaf.instance))
                               .replace("{where}", _where(pointer[:-1])))
                hint = _annotation(leaf, "x-hint") or ("" if leaf.validator == "required"
                                                        else hint)
                text = message.replace(" in the document", "")
                if len(pointer) > 1 and f" in {_where(pointer[:-1])}" not in text:
                    text = f"{_where(pointer[:-1])}: {text}"
                out.append(text + (f" ({hint})" if hint else ""))
    return out
