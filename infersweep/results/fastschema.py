"""A fast yes/no against the project's schemas, for files read by the thousand.

``jsonschema`` (the project's validator, whose messages every command prints) costs about
a millisecond per manifest point; a 2,000-point run would spend seconds on it.
``jsonschema-rs`` answers the same question in microseconds. Only a "valid" is trusted from it:
anything else goes through :mod:`infersweep.config.schema` for the located messages. One
difference is closed here: the project's integers exclude integral floats (``8.0``), which
JSON Schema counts as integers, so a float where the schema says integer sends the file to the
slow path too.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any


@cache
def _schemas() -> dict[str, dict]:
    out = {}
    for f in resources.files("infersweep.schemas").iterdir():
        if f.name.endswith(".schema.json"):
            s = json.loads(f.read_text(encoding="utf-8"))
            out[s["$id"]] = s
    return out


def _by_name(name: str) -> dict:
    return next(s for uri, s in _schemas().items() if uri.endswith(f"/{name}.schema.json"))


@cache
def _validator(name: str):
    import jsonschema_rs

    registry = jsonschema_rs.Registry(list(_schemas().items()))
    return jsonschema_rs.validator_for(_by_name(name), registry=registry)


def _resolve(schema: dict, root: dict) -> tuple[dict, dict]:
    while isinstance(schema, dict) and "$ref" in schema:
        ref = schema["$ref"]
        doc, _, frag = ref.partition("#")
        if doc:
            root = next(s for uri, s in _schemas().items() if uri.endswith("/" + doc))
        target = root
        for part in [p for p in frag.split("/") if p]:
            target = target[part]
        schema = {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
    return schema, root


def _plan(schema: Any, root: dict, depth: int = 0):
    """Where integers live in ``schema``: ``True`` (this value), ``("obj", {key: plan},
    extra)``, ``("arr", plan)``, or ``None`` (no integer below)."""
    if not isinstance(schema, dict) or depth > 32:
        return None
    schema, root = _resolve(schema, root)
    types = schema.get("type")
    types = [types] if isinstance(types, str) else (types or [])
    if "integer" in types and "number" not in types:
        return True
    props = {k: p for k, p in ((k, _plan(v, root, depth + 1))
                               for k, v in schema.get("properties", {}).items()) if p}
    extra = _plan(schema.get("additionalProperties"), root, depth + 1)
    items = _plan(schema.get("items"), root, depth + 1)
    if props or extra:
        return ("obj", props, extra) if not items else ("both", props, extra, items)
    return ("arr", items) if items else None


@cache
def _compiled(name: str):
    schema = _by_name(name)
    return _plan(schema, schema)


def _integral_float(plan, inst) -> bool:
    """A float where the plan says integer (JSON Schema would count ``8.0`` as one)."""
    if plan is True:
        return isinstance(inst, float)
    if isinstance(inst, dict) and plan[0] in ("obj", "both"):
        props, extra = plan[1], plan[2]
        for k, v in inst.items():
            sub = props.get(k, extra if k not in props else None)
            if sub is not None and _integral_float(sub, v):
                return True
        return False
    if isinstance(inst, list) and plan[0] in ("arr", "both"):
        sub = plan[1] if plan[0] == "arr" else plan[3]
        return any(_integral_float(sub, v) for v in inst)
    return False


def valid(instance: Any, name: str) -> bool:
    """True only when ``instance`` certainly passes the ``name`` schema."""
    plan = _compiled(name)
    return _validator(name).is_valid(instance) and not (plan and _integral_float(plan, instance))
