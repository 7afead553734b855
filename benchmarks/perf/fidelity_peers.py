"""Run the peer clients (aiperf, guidellm) for ``client_fidelity.py``.

Both come from PyPI and live in a separate virtualenv (``pip install aiperf guidellm``); they
never share the project's environment. Both run fully offline: the only address they talk to is
the loopback simulator, and the tokenizer is the word-level one ``fidelity_tokenizer.py``
writes (its word counts equal the simulator's).

Each ``run_*`` returns the client's reported figures, keyed like infersweep's:

* ``itl_mean`` / ``itl_p99``: the client's headline ITL. For both peers that is a per-request
  mean, (last token - first token) / (tokens - 1), with the p99 taken over requests, so it is
  compared with the same per-request statistic computed from the server's records
  (``per_request_itl``).
* ``icl_mean`` / ``icl_p99`` (aiperf only): its pooled per-chunk gaps, "inter_chunk_latency",
  which is the quantity infersweep reports as ITL; compared with the pooled true gaps.
* ``ttft_mean``, ``tok_s``, ``cpu_exit_s`` (the whole client process tree, to exit).
"""

from __future__ import annotations

import glob
import json
import os
import resource
import shutil
import subprocess
from pathlib import Path

from fidelity_tokenizer import HUB_ID, hub_snapshot

ISL, OSL = 1024, 256


def _pin(core: int) -> list[str]:
    return ["taskset", "-c", str(core)] if shutil.which("taskset") and os.cpu_count() > 1 else []


def _child_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def _offline_env(tok: Path) -> dict:
    return dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", HF_DATASETS_OFFLINE="1",
                HF_HUB_CACHE=str(tok.resolve() / "hub"), HF_HUB_DISABLE_TELEMETRY="1",
                DO_NOT_TRACK="1")


def _run(cmd: list[str], env: dict, timeout: float) -> tuple[subprocess.CompletedProcess, float]:
    cpu0 = _child_cpu()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    return p, _child_cpu() - cpu0


def aiperf_cmd(venv: Path, url: str, conc: int, n: int, art: Path) -> list[str]:
    return [*_pin(1), str(venv / "bin" / "aiperf"), "profile", "--model", "m", "--url", url,
            "--endpoint-type", "completions", "--streaming", "--tokenizer", HUB_ID,
            "--concurrency", str(conc), "--request-count", str(n),
            "--isl", str(ISL), "--isl-stddev", "0", "--osl", str(OSL), "--osl-stddev", "0",
            "--extra-inputs", "ignore_eos:true", "--use-server-token-count",
            "--no-server-metrics", "--no-gpu-telemetry", "--wait-for-model-timeout", "0",
            "--artifact-dir", str(art), "--ui-type", "none",
            "--workers-max", "1", "--record-processors", "1"]


def run_aiperf(venv: Path, tok: Path, url: str, conc: int, n: int, out: Path) -> dict:
    if not hub_snapshot(tok).is_dir():
        raise RuntimeError(f"{tok} has no hub/ entry: rerun fidelity_tokenizer.py {tok}")
    art = out / "aiperf"
    p, cpu = _run(aiperf_cmd(venv, url, conc, n, art), _offline_env(tok), 1800)
    found = glob.glob(str(art / "**" / "profile_export_aiperf.json"), recursive=True)
    if p.returncode != 0 or not found:
        raise RuntimeError(f"aiperf failed ({p.returncode}): {(p.stderr or p.stdout)[-1500:]}")
    m = json.loads(Path(found[0]).read_text())
    rec = m.get("records", m)

    def g(name, stat):
        v = rec.get(name) or {}
        return v.get(stat) if isinstance(v, dict) else None

    return {"itl_mean": g("inter_token_latency", "avg"), "itl_p99": g("inter_token_latency", "p99"),
            "icl_mean": g("inter_chunk_latency", "avg"), "icl_p99": g("inter_chunk_latency", "p99"),
            "ttft_mean": g("time_to_first_token", "avg"),
            "tok_s": g("output_token_throughput", "avg"),
            "completed": g("request_count", "avg"), "cpu_exit_s": cpu, "per_request_itl": True}


def guidellm_scenario(url: str, tok: Path, conc: int, n: int, res: Path) -> dict:
    return {"spec": {
        "backend": {"kind": "openai_http", "target": url, "model": "m",
                    "request_format": "/v1/completions", "extras": {"body": {"ignore_eos": True}}},
        "profile": {"kind": "concurrent", "streams": conc},
        "data": [{"kind": "synthetic_text", "prompt_tokens": ISL, "output_tokens": OSL}],
        "tokenizer": {"kind": "hf_auto", "model": str(tok.resolve())},
        "constraints": [{"kind": "max_requests", "count": n}],
        "outputs": [{"kind": "json", "path": str(res)}]}}


def run_guidellm(venv: Path, tok: Path, url: str, conc: int, n: int, out: Path) -> dict:
    res, scn = out / "guidellm.json", out / "guidellm-scenario.json"
    scn.write_text(json.dumps(guidellm_scenario(url, tok, conc, n, res)))
    cmd = [*_pin(1), str(venv / "bin" / "guidellm"), "run", "--scenario", str(scn),
           "--disable-console"]
    env = dict(_offline_env(tok), GUIDELLM__LOGGING__LOG_FILE=str(out / "guidellm.log"))
    p, cpu = _run(cmd, env, 1800)
    if p.returncode != 0 or not res.exists():
        raise RuntimeError(f"guidellm failed ({p.returncode}): {(p.stderr or p.stdout)[-1500:]}")
    b = json.loads(res.read_text())["benchmarks"][0]["metrics"]

    def g(name, stat):
        v = b.get(name, {}).get("successful", {})
        return v.get("percentiles", {}).get(stat) if stat.startswith("p") else v.get(stat)

    return {"itl_mean": g("inter_token_latency_ms", "mean"),
            "itl_p99": g("inter_token_latency_ms", "p99"),
            "ttft_mean": g("time_to_first_token_ms", "mean"),
            "tok_s": g("output_tokens_per_second", "mean"),
            "conc_reported": g("request_concurrency", "mean"),
            "completed": b.get("request_totals", {}).get("successful"),
            "cpu_exit_s": cpu, "per_request_itl": True}
