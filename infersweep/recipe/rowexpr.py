"""What a template's ``{{ ... }}`` may say about its row, and its value.

A placeholder is one term or an arithmetic of terms, read left to right::

    {{ row.image }}                                    a field of the row
    {{ row.prefill.tp }}                               a field of a worker block
    {{ row.isl * row.tp }}                             a product
    {{ row.decode.num-worker * row.decode.tp / 8 }}    ``/`` divides rounding up
    {{ row.setting.DECODE_MTP_SIZE + 1 }}              a sum

A term is ``row.FIELD`` or a whole number; ``*``, ``/`` and ``+`` apply in the order
written. Besides the matrix row's own fields a template may read two derived from it:

- ``row.gpu``: the GPU of the runner label as InferenceX names its scripts (``gb200-nv`` ->
  ``gb200``), so a template can say what a node of that GPU holds;
- ``row.setting.NAME``: the value of ``NAME=...`` in the row's prefill or decode
  ``additional-settings`` (a number when it is a plain ASCII decimal,
  :func:`infersweep.config.numbers.plain_number`; ``inf`` or ``1_000`` stay text). A template that names a setting
  acts on it, so a row carrying it is not refused as carrying an unknown setting.

``/`` rounds up because what it computes is a count of whole things: nodes for the GPUs of
some workers. Division of whole numbers is exact; arithmetic never overflows into a
traceback: a result beyond 10**15, or one that is not finite, is a ValueError naming the
expression, as a term that is not a number is.
"""

from __future__ import annotations

import math
import re

from infersweep.config import numbers
from infersweep.recipe import settings

GPU = "gpu"
SETTING = "setting."
_FIELD = r"[A-Za-z][A-Za-z0-9_-]*(?:\.[A-Za-z][A-Za-z0-9_-]*)*"
_TERM = rf"(?:row\.{_FIELD}|[0-9]+)"
EXPR = re.compile(rf"^{_TERM}(?:\s*[*/+]\s*{_TERM})*$")
FORMS = "arithmetic (*, + and / rounding up) of row fields and whole numbers"  # for messages
_TOKEN = re.compile(rf"row\.({_FIELD})|([0-9]+)|([*/+])")
LIMIT = numbers.LIMIT  # the largest value arithmetic may produce


CLUSTER_PREFIX = "cluster:"  # agentic rows run on an exact cluster label


def gpu_of(runner: str) -> str:
    """The GPU of a runner label as InferenceX's script names spell it (``mi355x-disagg`` ->
    ``mi355x``; an agentic row's ``cluster:mi355x-amds`` -> ``mi355x``)."""
    return runner.removeprefix(CLUSTER_PREFIX).split("-", 1)[0]


def fields(inner: str) -> list[str]:
    """The row fields an expression names (``row.`` left off)."""
    return [m.group(1) for m in _TOKEN.finditer(inner) if m.group(1)]


def is_expression(inner: str) -> bool:
    return bool(EXPR.match(inner))


def _number(text: str):
    found = numbers.plain_number(text)
    return text if found is None else found


def value(row: dict, name: str):
    """The row's value of ``name`` (a field, a dotted field of a block, or a derived one);
    None when the row has none."""
    if name == GPU:
        return gpu_of(str(row.get("runner"))) if row.get("runner") is not None else None
    if name.startswith(SETTING):
        found = settings.of_row(row).get(name[len(SETTING):])
        return None if found is None else _number(found[1])
    node = row
    for part in name.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def evaluate(inner: str, get):
    """The value of an expression, ``get(field)`` giving each field's value. A single term
    keeps its type; arithmetic takes numbers (raises ValueError naming the term that is not)."""
    tokens = [(m.group(1), m.group(2), m.group(3)) for m in _TOKEN.finditer(inner)]
    result, op = None, None
    for name, number, operator in tokens:
        if operator:
            op = operator
            continue
        term = get(name) if name else int(number)
        if len(tokens) == 1:
            return term
        if isinstance(term, bool) or not isinstance(term, (int, float)):
            shown = repr(term) if len(repr(term)) <= 40 else repr(term)[:37] + "..."
            raise ValueError(f"'{('row.' + name) if name else number}' is {shown}, "
                             "not a number")
        result = term if result is None else _apply(inner, op, result, term)
    return _bounded(inner, result)


def _apply(inner: str, op: str, left, right):
    """``left op right``; ``/`` rounds up (exactly for whole numbers)."""
    try:
        if op == "*":
            return _bounded(inner, left * right)
        if op == "+":
            return _bounded(inner, left + right)
        if right == 0:
            raise ValueError(f"'{inner}' divides by zero")
        if isinstance(left, int) and isinstance(right, int):
            return -(-left // right)
        return math.ceil(_bounded(inner, left / right))
    except OverflowError:
        raise ValueError(f"'{inner}' is too large (more than {LIMIT:.0e})") from None


def _bounded(inner: str, value):
    """``value`` when it is a finite number within :data:`LIMIT` (or not a number)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return value
    if isinstance(value, float) and not math.isfinite(value) or abs(value) > LIMIT:
        raise ValueError(f"'{inner}' is too large (more than {LIMIT:.0e})")
    return value
