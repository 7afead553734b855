"""What `infersweep launch` needs to run the real srtctl on the local Slurm in tests.

- a pins file naming the bundle's bare remote and an upstream commit (the shipped pin is the
  ATOM fork on GitHub, which this machine cannot reach);
- a fleets file: the shipped `local-slurm` fleet, with this machine's CPython 3.12 first on
  the job's PATH (uv needs it) or, where there is none, the uv double;
- upstream sglang 1P1D / 2P1D templates built from srtctl_setup's recipe builder (upstream has
  no ATOM backend): the benchmark section is left to the renderer, the served model name is
  the row's, and the client talks to the router on loopback;
- an upstream vLLM aggregated template for single-node rows (one `vllm serve` of the row's TP,
  its own front end), with a row-settings rule as our single-node templates have them;
- a row: the seed config's 1P1D or 2P1D row, or a single-node row of the ATOM config, with a
  small workload.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

from tests.integration.slurm import srtctl_setup
from tests.integration.slurm.srtctl_setup import DOUBLES, NETWORK_ENV, SYSTEM_CA, SYSTEM_PATH
from tests.livecatalog import frozen_checkout

REPO = srtctl_setup.REPO
SEED_KEY = "dsv4-fp4-mi355x-atom-disagg"


def write_lock(path: Path, url: str, commit: str) -> Path:
    path.write_text(yaml.safe_dump({"runtimes": {"srt-slurm": {
        "description": "upstream srt-slurm (test remote)", "repository": url, "commit": commit,
        "recipe-dialect": "v1", "mentions": ["srt-slurm"]}}}, sort_keys=False))
    return path


def write_fleets(path: Path, python312: Path | None, **changes) -> Path:
    data = yaml.safe_load((REPO / "configs" / "fleets.yaml").read_text())
    fleet = data["fleets"]["local-slurm"]
    env = fleet.setdefault("job-env", {}).setdefault("set", {})
    if python312:
        env["PATH"] = f"{python312.parent}:{SYSTEM_PATH}"
    else:
        fleet["setup-links"]["bin/uv"] = str(DOUBLES / "uv-without-python312")
        env["INFERSWEEP_UV_PYTHON"] = sys.executable
    fleet.update(changes)
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def upstream_template(s, prefill_workers: int, time_limit: str = "00:05:00") -> dict:
    r = srtctl_setup.disagg_sglang_recipe(
        s, name=f"launch-{prefill_workers}p1d", prefill_workers=prefill_workers,
        decode_workers=1, command="unused", time_limit=time_limit)
    for role in ("prefill", "decode"):
        r["backend"]["sglang_config"][role]["served-model-name"] = "{{ row.model }}"
    r["benchmark"] = {"type": "custom", "env": {"SRT_FRONTEND_HOST": "127.0.0.1"}}
    return r


def upstream_agg_template(s, time_limit: str = "00:05:00") -> dict:
    r = srtctl_setup.agg_vllm_recipe(s, name="launch-agg-tp{{ row.tp }}", command="unused",
                                     time_limit=time_limit)
    r["resources"] = {"gpu_type": "h100", "gpus_per_node": srtctl_setup.GPUS_PER_NODE,
                      "agg_nodes": 1, "agg_workers": 1, "gpus_per_agg": "{{ row.tp }}"}
    engine = r["backend"]["vllm_config"]["aggregated"]
    engine.update({"served-model-name": "{{ row.model }}", "tensor-parallel-size": "{{ row.tp }}"})
    engine.pop("max-num-seqs", None)
    r["benchmark"] = {"type": "custom", "env": {"SRT_FRONTEND_HOST": "127.0.0.1"}}
    # admission capped at the point's concurrency from 64 on, as the ATOM script does
    r["row-settings"] = [{"when": {"conc": {"min": 64}},
                          "set": {"backend.vllm_config.aggregated.max-num-seqs": "{{ row.conc }}"}}]
    return r


SINGLE_KEY = "dsv4-fp4-mi355x-atom"


def single_row(conc, isl: int = 64, osl: int = 16) -> dict:
    """A TP8 row of the single-node ATOM config, its concurrencies given (a list: one job of
    several points, as the sweep groups them)."""
    out = subprocess.run([sys.executable, "-m", "infersweep", "matrix", "test-config",
                          "--config-keys", SINGLE_KEY], capture_output=True, text=True,
                         cwd=frozen_checkout(), check=True).stdout
    row = next(r for r in json.loads(out) if r["tp"] == 8 and not r["dp-attn"])
    return {**row, "conc": conc, "isl": isl, "osl": osl, "config-key": SINGLE_KEY,
            "run-eval": False}


def seed_row(prefill_workers: int, conc=(2, 4), isl: int = 64, osl: int = 16) -> dict:
    out = subprocess.run([sys.executable, "-m", "infersweep", "matrix", "test-config",
                          "--config-keys", SEED_KEY], capture_output=True, text=True,
                         cwd=frozen_checkout(), check=True).stdout
    rows = [r for r in json.loads(out) if r["prefill"]["num-worker"] == prefill_workers]
    row = copy.deepcopy(rows[0])
    # lengths edited for a quick job: the row says which config it is
    row.update({"conc": list(conc), "isl": isl, "osl": osl, "config-key": SEED_KEY})
    return row


def launcher_env(cache: Path, cluster, **extra: str) -> dict[str, str]:
    """The launcher's own environment (as a workflow step would have it)."""
    keep = ("HOME", "LANG", "PATH", *NETWORK_ENV)
    env = {k: os.environ[k] for k in keep if k in os.environ}
    if "SSL_CERT_FILE" not in env and SYSTEM_CA.is_file():
        env["SSL_CERT_FILE"] = str(SYSTEM_CA)
    env.update({"SLURM_CONF": str(cluster.conf), "INFERSWEEP_CACHE": str(cache),
                "GITHUB_RUN_ID": "7001", "GITHUB_RUN_ATTEMPT": "1",
                "RUNNER_NAME": "local-slurm_00",
                # leaks a job must not inherit
                "VIRTUAL_ENV": "/nonexistent/venv", "PYTHONPYCACHEPREFIX": "/nonexistent/pyc"})
    env.update(extra)
    return env


def upstream_template_from(path: Path, *, served: str) -> dict:
    """A copy of a test template whose workers serve another model name (the client's
    requests then fail, and so the job)."""
    r = yaml.safe_load(Path(path).read_text())
    for role in ("prefill", "decode"):
        r["backend"]["sglang_config"][role]["served-model-name"] = served
    return r
