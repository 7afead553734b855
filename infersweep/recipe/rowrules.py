"""A template's ``row-settings``: engine settings that depend on the row or its concurrency.

InferenceX's single-node scripts compute such settings in shell (``if [ "$CONC" -ge 64 ];
then PARALLEL_ARGS+=(--enable-tbo)``). A template declares them instead, so that a reader,
``recipe render`` and the grouping of points into jobs all see the same server::

    row-settings:
    - when: {dp-attn: true, conc: {min: 64}}
      set:
        backend.atom_config.aggregated.enable-tbo: true
        backend.aggregated_environment.GPU_MAX_HW_QUEUES: "5"
    - when: {any: [{dp-attn: true}, {conc: {min: 64}}]}
      set: {backend.atom_config.aggregated.max-num-seqs: "{{ row.conc }}"}
    - when: {dcp-size: {min: 2}}
      refuse: ATOM takes no decode context parallelism

Rules apply in order; each whose ``when`` holds (every condition; ``any:`` one of a list)
sets its dotted paths (``null`` removes the key) or refuses the row with its message. A
condition is a row field (``tp``, ``ep``, ``dp-attn``, ``spec-decoding``, ``isl``,
``prefill.tp``, the derived ``gpu`` and ``setting.NAME``, see ``rowexpr``) or ``conc``
compared with a value, or with ``min``/``max``/``in``/``not`` (a value, or a list: none
of them). A value may hold ``{{ row.FIELD }}``, ``{{ row.conc }}`` and arithmetic such as ``{{ row.isl * row.tp }}``.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

from infersweep.diagnostics import Diagnostic
from infersweep.recipe import rowexpr
from infersweep.recipe.template import (
    PLACEHOLDER,
    ROW_SETTINGS,
    as_text,
    field_problem,
)
from infersweep.yamldoc import YamlDoc

SECTION = ROW_SETTINGS
CONC = "conc"
OPS = ("min", "max", "in", "not")


class Refused(Exception):
    """A rule refused the row: ``message``, at ``pointer`` of the template."""

    def __init__(self, message: str, pointer: tuple):
        super().__init__(message)
        self.message = message
        self.pointer = pointer


@dataclass(frozen=True)
class Context:
    """What a rule sees: the row's fields and one concurrency."""

    row: dict
    conc: int

    def get(self, name: str):
        return self.conc if name == CONC else rowexpr.value(self.row, name)


def _unknown(name: str) -> tuple[str, str] | None:
    """(message, hint) when a rule cannot read the field ``name``."""
    return None if name == CONC else field_problem(name)


def check(doc: YamlDoc) -> list[Diagnostic]:
    """Everything wrong with a template's ``row-settings`` on its own."""
    rules = doc.data.get(SECTION) if isinstance(doc.data, dict) else None
    if rules is None:
        return []
    out: list[Diagnostic] = []

    def bad(pointer, message, hint="", key=False):
        out.append(doc.diag((SECTION, *pointer), message, hint, rule="template-row-settings",
                            key=key))

    if not isinstance(rules, list):
        bad((), "row-settings must be a list of rules",
            "each rule is {when: {...}, set: {...}} or {when: {...}, refuse: MESSAGE}")
        return out
    for i, rule in enumerate(rules):
        if not isinstance(rule, dict):
            bad((i,), "a rule must be a mapping", "{when: {...}, set: {...}}")
            continue
        for extra in sorted(set(rule) - {"when", "set", "refuse"}):
            bad((i, extra), f"unknown rule key '{extra}'", "a rule has when, and set or refuse",
                key=True)
        if ("set" in rule) == ("refuse" in rule):
            bad((i,), "a rule has either 'set' or 'refuse'", "split it into two rules")
        _check_when(rule.get("when"), (i, "when"), bad)
        if "set" in rule:
            sets = rule["set"]
            if not isinstance(sets, dict) or not sets:
                bad((i, "set"), "'set' must map dotted paths to values",
                    "e.g. backend.sglang_config.aggregated.ep-size: '{{ row.ep }}'")
                continue
            for path, value in sets.items():
                if not isinstance(path, str) or not all(path.split(".")):
                    bad((i, "set", path), f"'{path}' is not a dotted path", "a.b.c", key=True)
                for inner in _placeholders(value):
                    if not rowexpr.is_expression(inner):
                        bad((i, "set", path), f"'{{{{ {inner} }}}}' is not row.FIELD or "
                            f"{rowexpr.FORMS}", "e.g. {{ row.isl * row.tp }}")
                        continue
                    for name in rowexpr.fields(inner):
                        if (problem := _unknown(name)) is not None:
                            bad((i, "set", path), *problem)
        elif not isinstance(rule.get("refuse"), str) or not rule["refuse"].strip():
            bad((i, "refuse"), "'refuse' must be a message saying why the row cannot run")
    return out


def _check_when(when, pointer: tuple, bad) -> None:
    if when is None:
        bad(pointer[:-1], "a rule needs 'when'", "use when: {} for a rule that always applies")
        return
    if not isinstance(when, dict):
        bad(pointer, "'when' must be a mapping of conditions")
        return
    for name, cond in when.items():
        if name == "any":
            if not isinstance(cond, list) or not cond:
                bad((*pointer, name), "'any' must be a non-empty list of conditions")
                continue
            for j, sub in enumerate(cond):
                _check_when(sub, (*pointer, name, j), bad)
            continue
        if (problem := _unknown(str(name))) is not None:
            bad((*pointer, name), *problem, key=True)
            continue
        if isinstance(cond, dict):
            for op in cond:
                if op not in OPS:
                    bad((*pointer, name, op), f"unknown comparison '{op}'",
                        f"use one of {', '.join(OPS)}", key=True)
            for op in ("min", "max"):
                if op in cond and (isinstance(cond[op], bool)
                                   or not isinstance(cond[op], (int, float))):
                    bad((*pointer, name, op), f"'{op}' takes a number")
            if "in" in cond and not isinstance(cond["in"], list):
                bad((*pointer, name, "in"), "'in' takes a list")


def _placeholders(value) -> list[str]:
    if isinstance(value, str):
        return [m.group(1) for m in PLACEHOLDER.finditer(value)]
    return []


def holds(when: dict, ctx: Context) -> bool:
    for name, cond in when.items():
        if name == "any":
            if not any(holds(sub, ctx) for sub in cond):
                return False
            continue
        value = ctx.get(name)
        if isinstance(cond, dict):
            if "min" in cond and not (isinstance(value, (int, float)) and value >= cond["min"]):
                return False
            if "max" in cond and not (isinstance(value, (int, float)) and value <= cond["max"]):
                return False
            if "in" in cond and value not in cond["in"]:
                return False
            if "not" in cond and (value in cond["not"] if isinstance(cond["not"], list)
                                  else value == cond["not"]):
                return False
        elif value != cond:
            return False
    return True


def _evaluate(inner: str, ctx: Context):
    return rowexpr.evaluate(inner, ctx.get)


def fill(value, ctx: Context):
    """``value`` with its placeholders filled; a value that is one placeholder keeps the
    field's type (``{{ row.conc }}`` is a number)."""
    if not isinstance(value, str):
        return value
    found = list(PLACEHOLDER.finditer(value))
    if len(found) == 1 and found[0].group(0) == value.strip():
        return _evaluate(found[0].group(1), ctx)
    for m in found:
        value = value.replace(m.group(0), as_text(_evaluate(m.group(1), ctx)))
    return value


def _set(data: dict, path: str, value) -> None:
    parts = path.split(".")
    node = data
    for part in parts[:-1]:
        if not isinstance(node.get(part), dict):
            node[part] = {}
        node = node[part]
    if value is None:
        node.pop(parts[-1], None)
    else:
        node[parts[-1]] = value


def apply(data: dict, rules: list, ctx: Context) -> dict:
    """A copy of ``data`` with every rule that holds for ``ctx`` applied (raises
    :class:`Refused` for a refusing rule)."""
    out = copy.deepcopy(data)
    for i, rule in enumerate(rules or []):
        if not holds(rule.get("when") or {}, ctx):
            continue
        if "refuse" in rule:
            raise Refused(rule["refuse"], (SECTION, i, "refuse"))
        for path, value in rule["set"].items():
            _set(out, path, fill(value, ctx))
    return out

