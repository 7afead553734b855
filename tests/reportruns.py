"""Run folders for the report tests and benchmark, processed by the real results code: two
topologies of the seed config with numbers that vary by concurrency, and GSM8K eval folders
in the layout `sweep run` writes (``<result-dir>/eval/eval.json``)."""

from __future__ import annotations

import json
from pathlib import Path

from tests import resultsrun as rr

KEY = "dsv4-fp4-mi355x-atom-disagg"
ONE = "mi355x-atom-dsv4-disagg-1p1d-tp8-8k1k"
TWO = "mi355x-atom-dsv4-disagg-2p1d-dpa-tp8-8k1k"


def _results(concs, base: float, seed: int) -> dict:
    """Throughput rising and interactivity falling with concurrency, as on a real engine."""
    out = {}
    for i, c in enumerate(concs):
        tpot = 8.0 + 3.0 * i + seed
        out[c] = rr.result(c, c, total_token_throughput=base * (1 + i) + 37 * seed,
                           output_throughput=base * (1 + i) / 4, median_tpot_ms=tpot,
                           mean_tpot_ms=tpot * 1.05, p90_tpot_ms=tpot * 1.5,
                           p99_tpot_ms=tpot * 1.8, **{"p99.9_tpot_ms": tpot * 2.0})
    return out


def eval_folder(folder: Path, *, key: str, run_id: str, attempt: int, score: float,
                fp: str, prefix: str = "dsv4") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "eval.json").write_text(json.dumps({
        "eval-version": 1, "task": "gsm8k", "model": "deepseek-ai/DeepSeek-V4-Pro",
        "n-samples": 50, "concurrency": 64,
        "scores": {"strict-match": {"exact_match": score, "stderr": 0.01},
                   "flexible-extract": {"exact_match": min(1.0, score + 0.01),
                                        "stderr": 0.01}},
        "filters": {"strict-match": {"regex": "x", "group_select": 0, "fallback": "[invalid]"},
                    "flexible-extract": {"regex": "y", "group_select": -1,
                                         "fallback": "[invalid]"}},
        "metric": {}, "requests": {"failed": 0, "retries": 0, "retry-time-s": 0.0},
        "provenance": {"config-key": key, "recipe-fingerprint": fp, "image": rr.IMAGE,
                       "model-prefix": prefix, "run-id": run_id, "attempt": attempt,
                       "job-id": f"job-{run_id}-{attempt}", "isl": 8192, "osl": 1024}}))
    return folder


def write_run(root: Path, run_id: str, *, seed: int = 0, concs_one=(4, 8, 16, 32),
              concs_two=(64, 128, 256), scale_down: float = 1.0, attempt: int = 1,
              evals: tuple[float, ...] = (), key: str = KEY, changelog: dict | None = None
              ) -> Path:
    """A run folder with both topologies of ``key``; ``evals`` are strict-match scores of
    eval folders beside the first topology's results (one per score)."""
    m1 = rr.write_job(root, rr.disagg_row(concs_one), config_key=key, name=ONE,
                      run_id=run_id, attempt=attempt, scale_down=scale_down,
                      results=_results(concs_one, 9000.0, seed))
    rr.write_job(root, rr.disagg_row(concs_two, prefill=(2, 8), dpa=True), config_key=key,
                 name=TWO, run_id=run_id, attempt=attempt, scale_down=scale_down,
                 results=_results(concs_two, 30000.0, seed))
    for n, score in enumerate(evals):
        eval_folder(m1.parent / "logs" / "fixed-seq" / "eval" / str(n), key=key, run_id=run_id,
                    attempt=attempt, score=score, fp=f"{n:x}" * 64)
    if changelog is not None:
        (root / "changelog_metadata.json").write_text(json.dumps(changelog))
    return root


FP8_KEY = "dsv4-fp8-mi355x-atom-disagg"


def runs_with_evals(root: Path, run_ids=("501", "502")) -> list:
    """Staged runs of the seed config and an fp8 variant of it (its own frontier group), a
    day apart, each with an eval of both configs: the newest run's seed-config eval fails
    the dsv4 threshold (0.80 < 0.91), its fp8 eval passes with no recorded standard error."""
    import dataclasses

    from infersweep.report import fromrun

    runs = []
    for i, (rid, score) in enumerate(zip(run_ids, (0.95, 0.80), strict=True)):
        run = fromrun.load(write_run(root / rid, rid, seed=i, evals=(score,)))
        fp8 = [{**p, "config_key": FP8_KEY, "precision": "fp8",
                "tput_per_gpu": p["tput_per_gpu"] * 0.8} for p in run.points]
        ev = [{**e, "config-key": FP8_KEY, "em-strict": 0.95, "em-strict-stderr": None,
               "em-flexible": 0.96} for e in run.evals]
        runs.append(dataclasses.replace(run, points=run.points + fp8, evals=run.evals + ev,
                                        created_at=f"2026-12-0{i + 1}T00:00:00Z"))
    return runs
