"""What the agentic replay client costs on this machine, beside the engine it drives.

For each concurrency, one simulated engine (`sim serve` with the SGLang agentic recipe's
prefix cache: page size 64) and one `infersweep agentic replay` of a seeded synthetic corpus
for a scaled-down window. While it runs, the replay's process tree (our wrapper, the client's
`aiperf` and its service processes) and the simulator are sampled every half second from
/proc: processes, RSS, PSS and CPU. The peer is the simulator measured in the same run: the
client's CPU is reported as a ratio of the engine's.

Needs the pinned client (`infersweep agentic client install`, or $INFERSWEEP_AGENTIC_CLIENT_VENV).

    python benchmarks/perf/agentic_replay.py --concs 8 32 --window 60
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CLK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")
ROW = {"image": "lmsysorg/sglang:v0.5.9-rocm700-mi35x", "model": "deepseek-ai/DeepSeek-V4-Pro",
       "model-prefix": "dsv4", "precision": "fp4", "framework": "sglang",
       "runner": "cluster:mi355x-amds", "tp": 8, "pp": 1, "dcp-size": 1, "pcp-size": 1,
       "ep": 1, "dp-attn": False, "spec-decoding": "none", "kv-offloading": "none",
       "total-cpu-dram-gb": 0, "duration": 3600, "scenario-type": "agentic-coding",
       "run-eval": False}


def _children() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError):
                continue
            kids.setdefault(ppid, []).append(int(entry.name))
    return kids


def tree(pid: int) -> list[int]:
    kids, out, todo = _children(), [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo += kids.get(p, [])
    return out


def sample(pids: list[int]) -> tuple[int, float, float, float]:
    """(live processes, RSS MiB, PSS MiB, CPU seconds so far) of ``pids``."""
    n, rss, pss, cpu = 0, 0.0, 0.0, 0.0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            rss += int(fields[21]) * PAGE / 2**20
            cpu += (int(fields[11]) + int(fields[12])) / CLK
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    pss += int(line.split()[1]) / 1024
            n += 1
        except (OSError, IndexError, ValueError):
            continue
    return n, rss, pss, cpu


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def measure(conc: int, window: int, work: Path, traces: Path, tokenizer: Path) -> dict:
    port = free_port()
    sim = subprocess.Popen([sys.executable, "-m", "infersweep", "sim", "serve", "--port",
                            str(port), "--served-model-name", ROW["model"], "--max-model-len",
                            "1048576", "--enable-prefix-caching", "--page-size", "64"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1.5)
    scale = 3600 / window
    start = time.monotonic()
    replay = subprocess.Popen(
        [sys.executable, "-m", "infersweep", "agentic", "replay", "--conc", str(conc),
         "--url", f"http://127.0.0.1:{port}", "--result-dir", str(work / f"c{conc}"),
         "--name", "perf", "--scale-down", f"{scale:g}", "--traces", str(traces),
         "--tokenizer", str(tokenizer), "--row-json", json.dumps({**ROW, "conc": conc})],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    peak_n = peak_rss = peak_pss = 0.0
    cpu_client = 0.0
    while replay.poll() is None:
        n, rss, pss, cpu = sample(tree(replay.pid))
        peak_n, peak_rss, peak_pss = max(peak_n, n), max(peak_rss, rss), max(peak_pss, pss)
        cpu_client = max(cpu_client, cpu)
        time.sleep(0.5)
    wall = time.monotonic() - start
    _, _, _, cpu_sim = sample([sim.pid])
    sim.terminate()
    sim.wait()
    if replay.returncode != 0:
        raise SystemExit(f"replay at c={conc} failed: {replay.stderr[-2000:]}")
    result = json.loads((work / f"c{conc}" / f"perf-c{conc}.agentic.json").read_text())
    requests = result["num_requests_successful"]
    return {"conc": conc, "window_s": window, "wall_s": round(wall, 1),
            "processes": int(peak_n), "rss_mib": round(peak_rss), "pss_mib": round(peak_pss),
            "client_cpu_s": round(cpu_client, 1), "engine_cpu_s": round(cpu_sim, 1),
            "client_cpu_pct_of_core": round(100 * cpu_client / wall, 1),
            "client_over_engine_cpu": round(cpu_client / cpu_sim, 2) if cpu_sim else None,
            "requests": requests, "requests_per_s": round(requests / window, 2),
            "server_hit_rate": result["server_metrics"]["server_overall_cache_hit_rate"],
            "theoretical_hit_rate": result["request_metrics"]["cache"][
                "theoretical_cache_hit_rate"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--concs", type=int, nargs="+", default=[8, 32])
    ap.add_argument("--window", type=int, default=60, help="profiling window, seconds")
    ap.add_argument("--traces", type=int, default=16, help="synthetic traces in the corpus")
    args = ap.parse_args()
    sys.path.insert(0, str(REPO))
    from infersweep.agentic import tokenizer as tokenizers
    from infersweep.agentic.client import locate
    from infersweep.agentic.tracegen import GenParams, write_corpus

    client = locate()
    with tempfile.TemporaryDirectory(prefix="infersweep-perf-agentic-") as tmp:
        work = Path(tmp)
        write_corpus(GenParams(traces=args.traces, seed=0), work / "traces")
        tokenizers.write_word_tokenizer(work / "tok",
                                        tokenizers.client_corpus_words(client.python))
        rows = [measure(c, args.window, work, work / "traces", work / "tok")
                for c in args.concs]
    for r in rows:
        print(json.dumps(r))


if __name__ == "__main__":
    main()
