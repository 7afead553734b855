"""Semantic differences between two recipes: what reaches each process, not how it is spelt.

Each recipe is reduced to sections of ``key -> value`` (engine flags as the worker receives
them, the environment each process sees, the benchmark as client + points + options, Slurm
limits with srt-slurm's defaults filled in); two recipes differ where those values differ.
Key order, quoting, anchors and comments never show up.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass
from typing import Any

from infersweep.recipe import command, topology

ABSENT = None
_TOP_HANDLED = {"name", "model", "identity", "resources", "backend", "frontend", "benchmark",
                "environment", "slurm", "sbatch_directives", "srun_options", "health_check"}
_HEALTH_DEFAULT = {"max_attempts": 180, "interval_seconds": 10}
_FRONTEND_DEFAULTS = {"enable_multiple_frontends": True}
_ROLE_ENV = {"prefill": "prefill_environment", "decode": "decode_environment",
             "agg": "aggregated_environment"}
_ROLE_CONFIG = {"prefill": "prefill", "decode": "decode", "agg": "aggregated"}
SECTIONS = ("model", "topology", "backend", "backend prefill", "backend decode",
            "backend aggregated", "front end", "benchmark", "slurm", "environment", "other")


@dataclass(frozen=True)
class Difference:
    section: str
    key: str
    a: Any
    b: Any

    def as_json(self) -> dict:
        return {"section": self.section, "key": self.key, "a": self.a, "b": self.b}


def cli_value(value) -> str | None:
    """How srt-slurm passes a flag's value: true = bare flag, false/null = left out."""
    if value is True:
        return "(flag)"
    if value is False or value is None:
        return None
    if isinstance(value, list):
        return " ".join(str(v) for v in value)
    return str(value)


def _cli(args) -> dict[str, str]:
    if not isinstance(args, dict):
        return {}
    out = {}
    for key, value in args.items():
        shown = cli_value(value)
        if shown is not None:
            out[str(key)] = shown
    return out


def _scalar(value) -> Any:
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True)
    return value


def _flatten(prefix: str, value, out: dict) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            _flatten(f"{prefix}.{k}" if prefix else str(k), v, out)
    else:
        out[prefix] = _scalar(value)


def _mapping(value) -> dict:
    return value if isinstance(value, dict) else {}


def _env(value) -> dict[str, str]:
    return {str(k): str(v) for k, v in value.items()} if isinstance(value, dict) else {}


def _processes(data: dict) -> dict[str, dict[str, str]]:
    """The environment each kind of process sees: ``environment`` plus its own section."""
    base = _env(data.get("environment"))
    backend = data.get("backend") if isinstance(data.get("backend"), dict) else {}
    res = data.get("resources") if isinstance(data.get("resources"), dict) else {}
    disagg = "prefill_nodes" in res or "decode_nodes" in res
    out = {}
    for role in (("prefill", "decode") if disagg else ("agg",)):
        out[role] = {**base, **_env(backend.get(_ROLE_ENV[role]))}
    frontend = data.get("frontend") if isinstance(data.get("frontend"), dict) else {}
    out["front end"] = {**base, **_env(frontend.get("env"))}
    bench = data.get("benchmark") if isinstance(data.get("benchmark"), dict) else {}
    out["benchmark"] = {**base, **_env(bench.get("env"))}
    return out


def sections(data: dict) -> dict[str, dict[str, Any]]:
    """A recipe reduced to comparable ``section -> {key: value}``."""
    data = data if isinstance(data, dict) else {}
    out: dict[str, dict[str, Any]] = {s: {} for s in SECTIONS}

    model = data.get("model") if isinstance(data.get("model"), dict) else {}
    for k, v in model.items():
        out["model"][f"model.{k}"] = _scalar(v)
    _flatten("identity", data.get("identity") or {}, out["model"])
    if "identity" in out["model"]:
        del out["model"]["identity"]

    res = data.get("resources") if isinstance(data.get("resources"), dict) else {}
    for k, v in res.items():
        if not k.startswith("gpus_per_") or k == "gpus_per_node":
            out["topology"][k] = _scalar(v)
    for role in topology.roles(res):
        out["topology"][f"gpus_per_{role.name}"] = role.gpus_per_worker

    backend = data.get("backend") if isinstance(data.get("backend"), dict) else {}
    for k, v in backend.items():
        if k in ("atom_config",) or k.endswith("_environment"):
            continue
        out["backend"][k] = _scalar(v)
    if backend.get("type") == "atom":
        out["backend"].setdefault("connector", "mooncake")
        if out["backend"].get("mooncake_protocol") in (None, ABSENT):
            out["backend"]["mooncake_protocol"] = "rdma"  # Mooncake's default transport
    engine = backend.get("atom_config") or backend.get("sglang_config") or {}
    if isinstance(engine, dict):
        for role, key in (("prefill", "prefill"), ("decode", "decode"),
                          ("aggregated", "aggregated")):
            out[f"backend {role}"] = _cli(engine.get(key))

    frontend = data.get("frontend") if isinstance(data.get("frontend"), dict) else {}
    merged = {**_FRONTEND_DEFAULTS, **frontend}
    for k, v in merged.items():
        if k == "env":
            continue
        if k == "args":
            for flag, value in _cli(v).items():
                out["front end"][f"--{flag}"] = value
        else:
            out["front end"][k] = _scalar(v)

    bench = data.get("benchmark") if isinstance(data.get("benchmark"), dict) else {}
    for k, v in bench.items():
        if k not in ("command", "env"):
            out["benchmark"][k] = _scalar(v)
    if isinstance(bench.get("command"), str):
        parsed = command.parse(bench["command"])
        out["benchmark"]["client"] = parsed.client
        out["benchmark"]["concurrencies"] = " ".join(parsed.points) if parsed.points else None
        for flag, value in parsed.options.items():
            out["benchmark"][flag] = value if value != "" else "(flag)"
        for statement in parsed.statements:
            out["benchmark"][f"statement: {statement}"] = "present"

    slurm = data.get("slurm") if isinstance(data.get("slurm"), dict) else {}
    for k, v in slurm.items():
        out["slurm"][k] = _scalar(v)
    for section, label in (("sbatch_directives", "sbatch"), ("srun_options", "srun")):
        for k, v in _mapping(data.get(section)).items():
            out["slurm"][f"{label} --{k}"] = _scalar(v)
    health = {**_HEALTH_DEFAULT, **_mapping(data.get("health_check"))}
    for k, v in health.items():
        out["slurm"][f"health_check.{k}"] = _scalar(v)
    with contextlib.suppress(TypeError, ValueError, KeyError):
        out["slurm"]["health deadline (s)"] = int(health["max_attempts"]) * int(
            health["interval_seconds"])

    out["other"]["name"] = data.get("name")
    for k, v in data.items():
        if k not in _TOP_HANDLED:
            _flatten(k, v, out["other"])
    return out


def _env_differences(a: dict, b: dict) -> list[Difference]:
    pa, pb = _processes(a), _processes(b)
    kinds = [k for k in pa if k in pb] + [k for k in pb if k not in pa]
    per_kind: dict[str, set] = {}
    for kind in kinds:
        ea, eb = pa.get(kind, {}), pb.get(kind, {})
        per_kind[kind] = {(k, ea.get(k), eb.get(k)) for k in set(ea) | set(eb)
                          if ea.get(k) != eb.get(k)}
    common = set.intersection(*per_kind.values()) if per_kind else set()
    out = [Difference("environment", f"{k} (all processes)", va, vb)
           for k, va, vb in sorted(common, key=lambda t: t[0])]
    for kind in kinds:
        for k, va, vb in sorted(per_kind[kind] - common, key=lambda t: t[0]):
            out.append(Difference("environment", f"{k} ({kind})", va, vb))
    return out


def differences(a: dict, b: dict, sections_of=sections) -> list[Difference]:
    """``sections_of``: :func:`sections`, or a cache of it (one recipe diffed against many)."""
    sa, sb = sections_of(a), sections_of(b)
    out: list[Difference] = []
    for section in SECTIONS:
        if section == "environment":
            out += _env_differences(a if isinstance(a, dict) else {}, b if isinstance(b, dict) else {})
            continue
        xa, xb = sa[section], sb[section]
        keys = list(xa) + [k for k in xb if k not in xa]
        for key in keys:
            va, vb = xa.get(key, ABSENT), xb.get(key, ABSENT)
            if not _same(va, vb):
                out.append(Difference(section, key, va, vb))
    return out


def _same(a, b) -> bool:
    """Equal as the receiving program reads them: 8 and "8", 1.0 and "1" are the same value."""
    if a is ABSENT or b is ABSENT:
        return a is b
    if a == b:
        return True
    if isinstance(a, bool) or isinstance(b, bool):
        return False
    if str(a) == str(b):
        return True
    try:
        return float(a) == float(b)  # "1.0" and "1" reach argparse as the same number
    except (TypeError, ValueError):
        return False


def show(value) -> str:
    """A value as the text report writes it."""
    if value is ABSENT:
        return "(unset)"
    return '""' if value == "" else str(value)


def text_report(diffs: list[Difference], a_name: str, b_name: str) -> str:
    if not diffs:
        return f"no semantic differences between {a_name} and {b_name}\n"
    lines = [f"--- {a_name}", f"+++ {b_name}"]
    current = None
    for d in diffs:
        if d.section != current:
            lines.append(f"[{d.section}]")
            current = d.section
        if d.key.startswith("statement: "):
            text = d.key[len("statement: "):]
            lines.append(f"  {'-' if d.a is not ABSENT else '+'} {text}")
        else:
            lines.append(f"  {d.key}: {show(d.a)} -> {show(d.b)}")
    lines.append(f"{len(diffs)} difference{'s' if len(diffs) != 1 else ''}")
    return "\n".join(lines) + "\n"
