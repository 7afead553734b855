"""Builds a run folder the way `sweep run` lays it out (row.json, manifest.json, one client
result per point) with chosen numbers, for the results tests and the benchmark."""

from __future__ import annotations

import copy
import json
from pathlib import Path

COMMIT = "81d46274f508e18ab14d1f123b75132005818dcf"
REVISION = "f95ef3ec30a16876a676e0af96d60f8e0605c7c5"
IMAGE = "rocm/atom-dev:nightly_202609031453"


def disagg_row(concs, prefill=(1, 8), decode=(1, 8), dpa=False) -> dict:
    def role(workers, tp, nodes_key):
        return {"num-worker": workers, "tp": tp, "pp": 1, "dcp-size": 1, "pcp-size": 1,
                "ep": 1, "dp-attn": dpa, "additional-settings": [f"{nodes_key}=1"]}
    return {"image": IMAGE, "model": "deepseek-ai/DeepSeek-V4-Pro", "model-prefix": "dsv4",
            "precision": "fp4", "framework": "atom-disagg", "runner": "mi355x-disagg",
            "isl": 8192, "osl": 1024, "spec-decoding": "none",
            "prefill": role(*prefill, "PREFILL_NODES"), "decode": role(*decode, "DECODE_NODES"),
            "conc": list(concs), "disagg": True, "exp-name": "dsv4_8k1k",
            "router": {"name": "atomesh", "version": REVISION}, "kv-p2p-transfer": "mooncake"}


def single_row(concs, tp=4, pp=2, pcp=1, dcp=2, ep=4) -> dict:
    return {"image": "vllm/vllm-openai:v0.11", "model": "openai/gpt-oss-120b",
            "model-prefix": "gptoss", "precision": "fp4", "framework": "vllm",
            "runner": "h200", "isl": 1024, "osl": 1024, "spec-decoding": "none", "tp": tp,
            "pp": pp, "pcp-size": pcp, "dcp-size": dcp, "ep": ep, "dp-attn": False,
            "conc": list(concs), "disagg": False, "exp-name": "gptoss_1k1k"}


def result(conc: int, n: int, **over) -> dict:
    """A client result JSON with round numbers (ms statistics as the client writes them).

    As the client writes them, the rates agree with the counts over the duration: the token
    counts follow the throughputs (default 24,000 and 6,000 tok/s over 10 s) and the request
    rate follows ``completed``, unless ``over`` sets them too."""
    data = {"date": "20261201-100000", "backend": "openai", "model_id": "m",
            "tokenizer_id": "m", "best_of": 1, "num_prompts": n, "request_rate": "inf",
            "burstiness": 1.0, "max_concurrency": conc, "duration": 10.0,
            "completed": n, "total_input_tokens": None, "total_output_tokens": None,
            "request_throughput": None, "request_goodput:": None,
            "output_throughput": 6000.0, "total_token_throughput": 24000.0}
    for metric, base in (("ttft", 150.0), ("tpot", 20.0), ("itl", 18.0), ("e2el", 2000.0)):
        for stat, f in (("mean", 1.1), ("median", 1.0), ("std", 0.2), ("p90", 1.5),
                        ("p99", 2.0), ("p99.9", 2.5)):
            data[f"{stat}_{metric}_ms"] = base * f
    data["failed"] = 0
    data.update(over)
    derived = {"total_output_tokens": lambda d: round(d["output_throughput"] * d["duration"]),
               "total_input_tokens": lambda d: round((d["total_token_throughput"]
                                                      - d["output_throughput"]) * d["duration"]),
               "request_throughput": lambda d: d["completed"] / d["duration"]}
    fallback = {"total_output_tokens": 100 * n, "total_input_tokens": 1000 * n,
                "request_throughput": n / 10.0}  # when a test made a rate no number
    for key, value in derived.items():
        if key not in over:
            try:
                data[key] = value(data)
            except (TypeError, ZeroDivisionError):
                data[key] = fallback[key]
    return data


def write_job(root: Path, row: dict, *, config_key="dsv4-fp4-mi355x-atom-disagg",
              name="mi355x-atom-dsv4-disagg-1p1d-tp8-8k1k", gpus=None, run_id="run-1",
              attempt=1, results=None, scale_down=1.0, skip=(), job_state="COMPLETED",
              commit=COMMIT) -> Path:
    """One job folder; ``results`` maps conc -> result dict (default: :func:`result`)."""
    folder = root / config_key / name
    (folder / "logs" / "fixed-seq").mkdir(parents=True, exist_ok=True)
    (folder / "row.json").write_text(json.dumps(row, indent=2))
    if gpus is None:
        if row.get("prefill"):
            p = row["prefill"]["num-worker"] * row["prefill"]["tp"]
            d = row["decode"]["num-worker"] * row["decode"]["tp"]
        else:
            p, d = 0, row["tp"] * row["pp"] * row["pcp-size"]
        gpus = {"prefill": p, "decode": d, "total": p + d}
    points = []
    for conc in row["conc"]:
        n = conc
        rel = f"logs/fixed-seq/{name}-c{conc}.json"
        entry = {"conc": conc, "isl": row["isl"], "osl": row["osl"], "requested": n,
                 "warmups": 1, "file": rel, "attempt": attempt, "status": "present",
                 "completed": n, "failed": 0, "metrics": {}, "reason": None}
        if conc in skip:
            entry.update(file=None, status="missing", completed=None, failed=None,
                         metrics=None, reason="no result file: the benchmark step ended "
                                              "without writing it")
        else:
            data = copy.deepcopy((results or {}).get(conc) or result(conc, n))
            (folder / rel).write_text(json.dumps(data, indent=1))
        points.append(entry)
    manifest = {"manifest-version": 1, "name": name,
                "provenance": {"config-key": config_key, "image": row["image"],
                               "srt-slurm-commit": commit,
                               "atom-revision": (row.get("router") or {}).get("version"),
                               "executor": "local", "job-id": f"job-{run_id}-{attempt}",
                               "job-state": job_state, "job-reason": None, "run-id": run_id,
                               "attempt": attempt, "collected": "2026-12-01T10:00:00Z"},
                "gpus": gpus, "scale-down": scale_down, "result-dir": "logs/fixed-seq",
                "points": points, "unexpected-files": [], "complete": True}
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=2))
    return folder / "manifest.json"
