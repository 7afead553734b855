"""One agentic result per matrix row and concurrency, from the replay client's exports.

The shape is InferenceX's agentic aggregate (``build_agg``): the row's identity and
parallelism, request accounting, ``request_metrics`` from the profiling records,
``server_metrics`` from the engine's own counters. On top of it a result keeps what the gate
needs to judge it: aiperf's ``submission_valid``, what a local run scaled down (``scaled``,
with the original values) and whether the result may be published, and where its exports
lie (``artifacts``, relative to the result file) so every count can be recomputed.
"""

from __future__ import annotations

import os
from pathlib import Path

import orjson

from infersweep.agentic import resultexports, resultrequests, servermetrics
from infersweep.atomic import write_atomic
from infersweep.config.schema import validate_data
from infersweep.diagnostics import Diagnostic, InputError
from infersweep.matrix.rows import concs as row_concs

RESULT_VERSION = 1
SCHEMA = "agentic-result"
SUFFIX = ".agentic.json"
SCENARIO = "agentic-coding"
RULE = "agentic-input"


def _refuse(where, message: str, hint: str = "", rule: str = RULE) -> InputError:
    return InputError(Diagnostic(str(where), 0, 0, message, hint, rule))


def _int(v, default: int = 1) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) else default


def _role(block: dict) -> dict:
    return {"num_workers": _int(block.get("num-worker"), 0), "tp": _int(block.get("tp"), 0),
            "pp": _int(block.get("pp")), "dcp_size": _int(block.get("dcp-size")),
            "pcp_size": _int(block.get("pcp-size")), "ep": _int(block.get("ep")),
            "dp_attention": str(bool(block.get("dp-attn", False))).lower()}


def _role_gpus(r: dict) -> int:
    return r["num_workers"] * r["tp"] * r["pp"] * r["pcp_size"]


def row_gpus(row: dict) -> int:
    """The GPUs a row runs on: TP × PP × PCP on one node; the sum over prefill and decode
    workers of workers × TP × PP × PCP for a multi-node row."""
    if row.get("prefill") is not None:
        return _role_gpus(_role(row["prefill"])) + _role_gpus(_role(row.get("decode") or {}))
    return _int(row.get("tp"), 0) * _int(row.get("pp")) * _int(row.get("pcp-size"))


def parallelism(row: dict) -> dict:
    """The parallelism fields under InferenceX's names (``prefill_…``/``decode_…`` for a
    multi-node row; ``tp``/``ep`` there are the two roles' sum and maximum, as InferenceX)."""
    if row.get("prefill") is not None:
        pre, dec = _role(row["prefill"]), _role(row.get("decode") or {})
        out = {"is_multinode": True, "tp": pre["tp"] + dec["tp"], "ep": max(pre["ep"], dec["ep"]),
               "dp_attention": "true" if "true" in (pre["dp_attention"], dec["dp_attention"])
               else "false"}
        for side, r in (("prefill", pre), ("decode", dec)):
            out |= {f"{side}_{k}": v for k, v in r.items()}
        return out | {"num_prefill_gpu": _role_gpus(pre), "num_decode_gpu": _role_gpus(dec)}
    return {"is_multinode": False, "tp": _int(row.get("tp"), 0), "pp": _int(row.get("pp")),
            "dcp_size": _int(row.get("dcp-size")), "pcp_size": _int(row.get("pcp-size")),
            "ep": _int(row.get("ep")),
            "dp_attention": str(bool(row.get("dp-attn", False))).lower()}


def check_row(row, where="the row") -> None:
    if not isinstance(row, dict):
        raise _refuse(where, "the matrix row is not a JSON object",
                      "pass one row as `infersweep matrix` printed it")
    if row.get("scenario-type") != SCENARIO:
        raise _refuse(where, f"the matrix row's scenario-type is {row.get('scenario-type')!r}, "
                      f"not {SCENARIO!r}", "agentic results come from agentic-coding rows; "
                      "fixed-length points go through `infersweep results process`")
    if row.get("conc") is None or not row_concs(row):
        raise _refuse(where, "the matrix row names no concurrency")


def check_scaled(scaled, where="--scaled-down-json") -> None:
    """``scaled``: what a local run shrank, ``{"<setting>": {"original": x, "run": y}}``."""
    if scaled is None:
        return
    if not isinstance(scaled, dict) or not scaled:
        raise _refuse(where, "the scaled-down record is not a non-empty JSON object",
                      'e.g. {"duration": {"original": 3600, "run": 60}}')
    for k, v in scaled.items():
        ok = isinstance(v, dict) and set(v) == {"original", "run"} and all(
            isinstance(x, (int, float)) and not isinstance(x, bool) for x in v.values())
        if not ok:
            raise _refuse(where, f"scaled-down setting {k!r} is {v!r}, expected "
                          '{"original": <number>, "run": <number>}')


def _dataset(aggregate: dict) -> dict:
    sets = (aggregate.get("input_config") or {}).get("datasets") or [{}]
    d = sets[0] if isinstance(sets[0], dict) else {}
    return {k: d.get(k) for k in ("name", "type", "format", "random_seed")} | {
        "source": Path(str(d["path"])).name if d.get("path") else d.get("public_dataset")}


def _publishable(submission_valid, scaled) -> tuple[bool, str | None]:
    if scaled:
        shrunk = ", ".join(f"{k} {v['run']:g} of {v['original']:g}" for k, v in scaled.items())
        return False, f"a local run scaled down ({shrunk})"
    if submission_valid is not True:
        return False, f"aiperf's submission_valid is {submission_valid!r}"
    return True, None


def process(artifact_dir: Path, row: dict, *, framework: str, gpus: int,
            scaled: dict | None) -> dict:
    """The agentic result of one replay: ``artifact_dir`` is aiperf's output folder,
    ``row`` the matrix row it ran, ``gpus`` the GPUs its throughput is shared by,
    ``scaled`` what a local run shrank (None for a full run)."""
    check_row(row)
    check_scaled(scaled)
    if isinstance(gpus, bool) or not isinstance(gpus, int) or gpus <= 0:
        raise _refuse(artifact_dir, f"{gpus!r} GPUs: expected a whole number above 0")
    want = row_gpus(row)
    if want and gpus != want:
        raise _refuse(artifact_dir, f"{gpus} GPU(s) given, the matrix row's parallelism gives "
                      f"{want}", "per-GPU throughput divides by the row's GPUs; pass those")
    ex = resultexports.read(Path(artifact_dir))
    phase = resultexports.profiling_phase(ex.aggregate)
    conc = phase.get("concurrency")
    if conc not in row_concs(row):
        raise _refuse(ex.folder / resultexports.AGGREGATE,
                      f"the replay ran at concurrency {conc!r}; the matrix row asks for "
                      f"{row_concs(row)}", "these exports belong to another point")
    meta = ex.aggregate.get("metadata") if isinstance(ex.aggregate.get("metadata"), dict) else {}
    submission_valid = meta.get("submission_valid")
    publishable, why = _publishable(submission_valid, scaled)
    acc = ex.accounting
    errors = len(ex.errors)
    backend = row.get("kv-offload-backend") or {}
    out = {
        "result-version": RESULT_VERSION,
        "hw": row.get("runner"), "conc": conc, "image": row.get("image"),
        "recipe_fingerprint": row.get("recipe-fingerprint") or _fingerprint(row),
        "model": row.get("model"), "infmax_model_prefix": row.get("model-prefix"),
        "framework": framework, "precision": row.get("precision"),
        "spec_decoding": row.get("spec-decoding", "none"),
        "disagg": bool(row.get("disagg", False)), "scenario_type": SCENARIO,
        "exp_name": row.get("exp-name"),
        **parallelism(row), "num_gpus": gpus,
        "kv_offloading": row.get("kv-offloading", "none"),
        "kv_offload_backend": backend.get("name", "") if isinstance(backend, dict) else "",
        "allocated_cpu_dram_gb": row.get("total-cpu-dram-gb", 0),
        "num_requests_total": acc["records_total"],
        "num_requests_successful": len(ex.records),
        "request_accounting": acc | {"error_request_count": errors,
                                     "error_rate": errors / (len(ex.records) + errors)
                                     if ex.records or errors else None},
        "router": ({"name": row["router"].get("name"), "version": row["router"].get("version")}
                   if isinstance(row.get("router"), dict) else None),
        "kv_p2p_transfer": row.get("kv-p2p-transfer"),
        "dataset": _dataset(ex.aggregate),
        "request_metrics": resultrequests.request_metrics(ex.records, ex.aggregate, gpus),
    }
    out["server_metrics"] = servermetrics.server_metrics(ex.server, framework)
    out["kv_cache_pool_tokens"] = out["server_metrics"]["kv_cache"]["gpu_total_tokens"]
    out |= {
        "duration": {"row": row.get("duration"), "run": phase.get("duration")},
        "warmup_requests_per_lane": phase.get("warmup_requests_per_lane"),
        "client": {"name": "aiperf", "version": ex.aggregate.get("aiperf_version"),
                   "schema_version": ex.aggregate.get("schema_version"),
                   "scenario": meta.get("scenario")},
        "submission_valid": submission_valid,
        "submission_invalid_reasons": list(meta.get("submission_invalid_reasons") or []),
        "scaled": scaled, "publishable": publishable, "publishable_reason": why,
        "artifacts": None, "warnings": ex.warnings,
    }
    return out


def _fingerprint(row: dict) -> str:
    from infersweep.changelog.buckets import recipe_fingerprint

    return recipe_fingerprint(row)


def schema_problems(result: dict) -> list[str]:
    return validate_data(result, SCHEMA)


def to_json(result: dict) -> bytes:
    return orjson.dumps(result, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"


def write(result: dict, out: Path, artifact_dir: Path) -> None:
    """Write ``result`` to ``out`` (atomically) with ``artifacts`` relative to its folder;
    a result its schema refuses is never written."""
    rel = os.path.relpath(os.path.abspath(artifact_dir), os.path.abspath(Path(out).parent))
    if rel == ".." or rel.startswith(".." + os.sep) or os.path.isabs(rel):
        raise _refuse(out, f"the exports ({artifact_dir}) are not below the result's folder",
                      "write the result into the job folder that holds the exports, so the "
                      "gate can recompute it from them", "results-path")
    result = result | {"artifacts": Path(rel).as_posix()}
    found = schema_problems(result)
    if found:
        raise _refuse(out, "the result does not match its schema: " + "; ".join(found[:5]),
                      "a bug in `agentic process`: report it with the exports", "schema")
    write_atomic(out, to_json(result), "the agentic result")
