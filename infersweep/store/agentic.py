"""Agentic-coding results in the store: their identity, headline columns and checks.

An entry is one item of ``results collect``'s ``agentic`` list (``config_key``, ``name``,
``result_file``, ``problems``, ``result``). Its point is the run, the config, the row's
recipe fingerprint, the KV-offload mode (``kv_offloading`` and ``kv_offload_backend``) and the
concurrency: the same recipe with and without offload are two points. Only results that
passed the agentic gates are stored; a scaled-down local result is stored with ``scaled``
set and ``publishable`` false, whatever the result says of itself.
"""

from __future__ import annotations

from infersweep.config.schema import validate_data
from infersweep.diagnostics import Diagnostic
from infersweep.results import fastschema

RESULT_SCHEMA = "agentic-result"
RULE = "store-agentic"
KEY = ("config_key", "recipe_fingerprint", "kv_offloading", "kv_offload_backend", "conc")
ENTRY_FIELDS = {"config_key": str, "name": str, "result_file": str, "problems": list,
                "result": dict}


def _get(data, *path):
    for p in path:
        if not isinstance(data, dict):
            return None
        data = data.get(p)
    return data


def _float(v):
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def is_scaled(result: dict) -> bool:
    return bool(result.get("scaled"))


def is_publishable(result: dict) -> bool:
    """Publishable only when the result says so, aiperf's submission was valid and the run
    was not scaled down: a local run never is, whatever its ``publishable`` says."""
    return (result.get("publishable") is True and result.get("submission_valid") is True
            and not is_scaled(result))


def key(entry: dict) -> tuple:
    r = entry["result"]
    return (entry["config_key"], str(r.get("recipe_fingerprint")),
            str(r.get("kv_offloading") or "none"), str(r.get("kv_offload_backend") or ""),
            r.get("conc"))


def columns(entry: dict) -> dict:
    """The indexed columns of an entry (identity and headline numbers)."""
    r = entry["result"]
    rm = r.get("request_metrics") or {}
    lat = rm.get("latency") or {}
    per_gpu = _get(rm, "throughput", "per_gpu") or {}
    server = r.get("server_metrics") or {}
    return {
        **dict(zip(KEY, key(entry), strict=True)),
        "name": entry["name"], "result_file": entry["result_file"],
        "exp_name": r.get("exp_name"), "image": r.get("image"), "num_gpus": r.get("num_gpus"),
        "tput_per_gpu": _float(per_gpu.get("total_tput_tps")),
        "output_tput_per_gpu": _float(per_gpu.get("output_tput_tps")),
        "input_tput_per_gpu": _float(per_gpu.get("input_tput_tps")),
        "median_intvty": _float(_get(lat, "intvty", "p50")),
        "median_ttft": _float(_get(lat, "ttft", "p50")),
        "p90_ttft": _float(_get(lat, "ttft", "p90")),
        "p99_ttft": _float(_get(lat, "ttft", "p99")),
        "median_e2el": _float(_get(lat, "e2el", "p50")),
        "server_gpu_cache_hit_rate": _float(server.get("server_gpu_cache_hit_rate")),
        "server_cpu_cache_hit_rate": _float(server.get("server_cpu_cache_hit_rate")),
        "theoretical_cache_hit_rate": _float(_get(rm, "cache", "theoretical_cache_hit_rate")),
        "gpu_kv_cache_usage": _float(server.get("gpu_kv_cache_usage_pct")),
        "error_rate": _float(_get(r, "request_accounting", "error_rate")),
        "num_requests_total": r.get("num_requests_total"),
        "num_requests_successful": r.get("num_requests_successful"),
        "publishable": is_publishable(r), "scaled": is_scaled(r),
    }


def config_values(entry: dict) -> dict:
    """The ``configs`` table's values from an agentic result (it names them all)."""
    r = entry["result"]
    return {"model": r.get("model"), "model_prefix": r.get("infmax_model_prefix"),
            "hw": r.get("hw"), "framework": r.get("framework"), "precision": r.get("precision"),
            "spec_decoding": r.get("spec_decoding"), "disagg": r.get("disagg"),
            "is_multinode": r.get("is_multinode")}


def check(entries: list, non_finite) -> list[Diagnostic]:
    """What the store refuses: an entry that is not one ``results collect`` writes, a result
    its schema refuses, one the agentic gates found problems with, NaN or infinity, and two
    results for one point."""
    out: list[Diagnostic] = []
    seen: dict[tuple, int] = {}
    for i, e in enumerate(entries):
        label = f"agentic result {i + 1}"
        if not isinstance(e, dict):
            out.append(Diagnostic(label, 0, 0, f"{label} is not a JSON object",
                                  "pass the `agentic` list `results collect` writes", RULE))
            continue
        where = e["result_file"] if isinstance(e.get("result_file"), str) else label
        wrong = [k for k, t in ENTRY_FIELDS.items() if not isinstance(e.get(k), t)]
        if wrong:
            out.append(Diagnostic(where, 0, 0, f"{label}: {', '.join(wrong)} missing or of the "
                                  "wrong type", "pass the `agentic` list `results collect` "
                                  "writes", RULE))
            continue
        label = f"{label} ({e['config_key']} {e['name']})"
        r = e["result"]
        if not fastschema.valid(r, RESULT_SCHEMA) and (found := validate_data(r, RESULT_SCHEMA)):
            out.append(Diagnostic(where, 0, 0, f"{label} is not an agentic result: "
                                  + "; ".join(found[:3]),
                                  "pass results `infersweep agentic process` wrote", RULE))
            continue
        if e["problems"]:
            out.append(Diagnostic(where, 0, 0, f"{label} did not pass the agentic gates: "
                                  + "; ".join(str(p) for p in e["problems"][:3]),
                                  "run `infersweep agentic check` on its job folder, then "
                                  "rerun the point or process its exports again", RULE))
        if bad := non_finite(r):
            out.append(Diagnostic(where, 0, 0, f"{label}: {bad} is not a finite number", "",
                                  RULE))
        k = key(e)
        if k in seen:
            out.append(Diagnostic(where, 0, 0, f"{label} is the same point as agentic result "
                                  f"{seen[k] + 1} ({' '.join(map(str, k))})",
                                  "keep exactly one result per row, KV-offload mode and "
                                  "concurrency", RULE))
        seen.setdefault(k, i)
    return out
