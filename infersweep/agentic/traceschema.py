"""The Weka trace schema as the replay client enforces it, plus the checks it leaves out.

The client (aiperf, and its fork agentx-harness) validates each trace with pydantic models
that forbid unknown keys; a trace it refuses fails the run only after the job has its GPUs.
:func:`trace_problems` names every such problem first, and also what the client accepts
but cannot replay sensibly (a request with no input, a clock that runs backwards, two
subagents with one id). The client is lax about types (``"5"`` or ``true``
pass as integers); here a count must be a JSON integer and a time a JSON number, because a
corpus written any other way is a corpus written by mistake.

Problems carry a pointer into the trace (keys and list indexes); :mod:`traces` turns it into
``file:line:col``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from infersweep.diagnostics import did_you_mean

# Keys per object, as the client's models declare them: name -> (kind, required).
TRACE_KEYS = {
    "id": ("str", True), "models": ("str_list", True), "block_size": ("pos_int", True),
    "hash_id_scope": ("scope", True), "requests": ("list", True),
    "tool_tokens": ("int", False), "system_tokens": ("int", False),
    "totals": ("dict_or_null", False),
}
REQUEST_KEYS = {
    "t": ("num", True), "type": ("str", True), "model": ("str", True),
    "in": ("int", True), "out": ("int", True),
    "hash_ids": ("int_list", False), "input_types": ("str_list", False),
    "output_types": ("str_list", False), "stop": ("str", False),
    "api_time": ("num_or_null", False), "think_time": ("num_or_null", False),
}
STREAMING_KEYS = {**REQUEST_KEYS, "ttft": ("num_or_null", False)}
SUBAGENT_KEYS = {
    "t": ("num", True), "type": ("str", True), "agent_id": ("str", True),
    "subagent_type": ("str", True), "status": ("str", True), "requests": ("list", True),
    "models": ("str_list", True), "duration_ms": ("int_or_null", False),
    "total_tokens": ("int_or_null", False), "tool_use_count": ("int_or_null", False),
    "tool_tokens": ("int", False), "system_tokens": ("int", False),
}
KEYS_BY_TYPE = {"n": REQUEST_KEYS, "s": STREAMING_KEYS, "subagent": SUBAGENT_KEYS}

_EXPECTED = {
    "str": ("a string", "write it in double quotes"),
    "int": ("an integer", "write a whole number without quotes, e.g. 4096"),
    "pos_int": ("a positive integer", "the trace format uses 64"),
    "num": ("a number", "write seconds as a JSON number without quotes, e.g. 12.5"),
    "num_or_null": ("a number or null", "write seconds as a JSON number, or null"),
    "int_or_null": ("an integer or null", "write a whole number, or null"),
    "str_list": ("a list of strings", 'e.g. ["model-a"]'),
    "int_list": ("a list of integers", "hash ids are whole numbers, e.g. [1, 2, 3]"),
    "list": ("a list", "write a JSON array"),
    "dict_or_null": ("an object or null", "the client keeps it opaque; omit it if unsure"),
    "scope": ('"local"', 'the client supports only "local" (hash ids scoped per trace)'),
}

JOIN_EPSILON = 1e-6  # the client's tolerance when telling relative from absolute child times


@dataclass(frozen=True)
class Problem:
    pointer: tuple
    message: str
    hint: str = ""
    rule: str = "trace-schema"
    at_key: bool = False  # point at the key rather than its value
    warning: bool = False


def _is_int(v) -> bool:
    return type(v) is int


def _is_num(v) -> bool:
    return type(v) in (int, float) and math.isfinite(v)


def _kind_ok(kind: str, v) -> bool:
    if kind == "str":
        return isinstance(v, str)
    if kind == "int":
        return _is_int(v)
    if kind == "pos_int":
        return _is_int(v) and v > 0
    if kind == "num":
        return _is_num(v)
    if kind == "num_or_null":
        return v is None or _is_num(v)
    if kind == "int_or_null":
        return v is None or _is_int(v)
    if kind == "str_list":
        return isinstance(v, list) and all(isinstance(x, str) for x in v)
    if kind == "int_list":  # the type check runs in C: lists of thousands of ids are common
        return isinstance(v, list) and set(map(type, v)) <= {int}
    if kind == "list":
        return isinstance(v, list)
    if kind == "dict_or_null":
        return v is None or isinstance(v, dict)
    if kind == "scope":
        return v == "local"
    raise AssertionError(kind)


def _json_type(v) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return f"the string {v[:20]!r}"
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    if isinstance(v, (int, float)):
        return f"{v!r}"
    return "a list" if isinstance(v, list) else "an object"


def _first_bad_item(kind: str, v) -> int | None:
    if kind in ("str_list", "int_list") and isinstance(v, list):
        want = str if kind == "str_list" else int
        for i, x in enumerate(v):
            if not (type(x) is want if want is int else isinstance(x, want)):
                return i
    return None


def _object_problems(obj, keys: dict, where: tuple, what: str) -> list[Problem]:
    """Unknown, missing and mistyped keys of one object."""
    if not isinstance(obj, dict):
        return [Problem(where, f"{what} must be a JSON object, not {_json_type(obj)}",
                        "see docs/agentic.md#traces for the trace format")]
    out = []
    for k in obj:
        if k not in keys:
            hint = did_you_mean(k, keys) or f"the client refuses unknown keys; allowed: " \
                                                f"{', '.join(keys)}"
            out.append(Problem(where + (k,), f"unknown key '{k}' in {what}", hint,
                               at_key=True))
    for k, (kind, required) in keys.items():
        if k not in obj:
            if required:
                out.append(Problem(where, f"{what} has no '{k}'",
                                   f"add '{k}': {_EXPECTED[kind][0]}"))
            continue
        v = obj[k]
        if not _kind_ok(kind, v):
            bad = _first_bad_item(kind, v)
            expected, hint = _EXPECTED[kind]
            if bad is not None:
                out.append(Problem(where + (k, bad),
                                   f"'{k}'[{bad}] is {_json_type(v[bad])}; '{k}' must be "
                                   f"{expected}", hint))
            else:
                out.append(Problem(where + (k,), f"'{k}' must be {expected}, not "
                                                  f"{_json_type(v)}", hint))
    return out


def _request_problems(req, where: tuple, what: str, allow_subagent: bool) -> list[Problem]:
    if not isinstance(req, dict):
        return _object_problems(req, REQUEST_KEYS, where, what)
    kind = req.get("type")
    allowed = ("n", "s", "subagent") if allow_subagent else ("n", "s")
    if kind not in allowed:
        names = ", ".join(f'"{a}"' for a in allowed)
        hint = ("a subagent's requests are API calls only; a subagent cannot nest another"
                if kind == "subagent" else f"one of {names}")
        if "type" not in req:
            return [Problem(where, f"{what} has no 'type'", f"add 'type': one of {names}")]
        return [Problem(where + ("type",), f"{what} has type {_json_type(kind)}", hint)]
    return _object_problems(req, KEYS_BY_TYPE[kind], where, what)


def schema_problems(trace) -> list[Problem]:
    """Everything the client's models would refuse in one trace."""
    out = _object_problems(trace, TRACE_KEYS, (), "a trace")
    if not isinstance(trace, dict) or not isinstance(trace.get("requests"), list):
        return out
    for i, req in enumerate(trace["requests"]):
        where = ("requests", i)
        out += _request_problems(req, where, f"request {i}", allow_subagent=True)
        if isinstance(req, dict) and req.get("type") == "subagent" \
                and isinstance(req.get("requests"), list):
            for j, inner in enumerate(req["requests"]):
                out += _request_problems(inner, where + ("requests", j),
                                         f"request {j} of subagent {i}", allow_subagent=False)
    return out


def _call_problems(req: dict, where: tuple) -> list[Problem]:
    """A request the client accepts but cannot replay as recorded."""
    out = []
    n_in, n_out = req["in"], req["out"]
    if n_in <= 0:
        out.append(Problem(where + ("in",), f"'in' is {n_in}; a request needs input tokens",
                           "'in' counts the prompt's tokens (hash blocks x block_size)",
                           rule="trace-sense"))
    if n_out < 0:
        out.append(Problem(where + ("out",), f"'out' is {n_out}; it cannot be negative",
                           "'out' is the recorded output length", rule="trace-sense"))
    elif n_out == 0:
        out.append(Problem(where + ("out",), "'out' is 0; the client sends max_tokens 1",
                           "a capture with no output; generated corpora always have out >= 1",
                           rule="trace-out-zero", warning=True))
    for name in ("t", "api_time", "think_time"):
        v = req.get(name)
        if v is not None and v < 0:
            out.append(Problem(where + (name,), f"'{name}' is {v}; times cannot be negative",
                               "times are seconds since the trace started", rule="trace-sense"))
    return out


def _order_problems(reqs: list, where: tuple, what: str, base_t: float | None) -> list[Problem]:
    out = []
    prev = None
    for i, req in enumerate(reqs):
        t = req["t"]
        if base_t is not None and t + JOIN_EPSILON < base_t:
            t = base_t + t  # the client reads a child time before the spawn as relative
        if prev is not None and t < prev:
            out.append(Problem(where + (i, "t"),
                               f"'t' goes back in time in {what}: {req['t']} after {prev}",
                               "requests are listed in the order they started; sort them by 't'",
                               rule="trace-sense"))
        prev = t
    return out


def sense_problems(trace: dict) -> list[Problem]:
    """Problems of a trace that passed :func:`schema_problems`."""
    out = []
    reqs = trace["requests"]
    if not reqs:
        out.append(Problem(("requests",), "the trace has no requests",
                           "drop the trace from the corpus", rule="trace-sense"))
    out += _order_problems(reqs, ("requests",), "the trace", None)
    seen_parent_call = False
    agent_ids: dict[str, int] = {}
    for i, req in enumerate(reqs):
        if req["type"] != "subagent":
            seen_parent_call = True
            out += _call_problems(req, ("requests", i))
            continue
        if seen_parent_call:  # the client drops a subagent no parent call precedes
            first = agent_ids.setdefault(req["agent_id"], i)
            if first != i:
                out.append(Problem(("requests", i, "agent_id"),
                                   f"agent_id '{req['agent_id']}' is also subagent {first}'s",
                                   "the client refuses two subagents with one id in a trace",
                                   rule="trace-sense"))
        if req["t"] < 0:
            out.append(Problem(("requests", i, "t"), f"'t' is {req['t']}; times cannot be "
                                                     "negative", rule="trace-sense"))
        out += _order_problems(req["requests"], ("requests", i, "requests"),
                               f"subagent {i}", req["t"])
        for j, inner in enumerate(req["requests"]):
            out += _call_problems(inner, ("requests", i, "requests", j))
    return out


def trace_problems(trace) -> list[Problem]:
    """Schema problems; when there are none, the checks of sense."""
    found = schema_problems(trace)
    return found or sense_problems(trace)
