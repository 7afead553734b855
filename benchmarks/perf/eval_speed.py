"""GSM8K eval speed: `infersweep eval gsm8k` of all 1,319 problems against the simulator.

Starts `infersweep sim serve` in its GSM8K answer mode (its default timing model, so the
simulated prefill of every 5-shot prompt counts) and runs the whole eval command in a fresh
process at concurrency 128, ``--runs`` times; reports wall time, the CPU time of the eval
process, both scores and the request counts. Target: under 2 minutes
on 2 cores. Uses the standard GSM8K splits beside the repository when present
(``../shared/data/gsm8k``), else a generated set of the same size.

    python benchmarks/perf/eval_speed.py --runs 3
"""

from __future__ import annotations

import argparse
import json
import resource
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
GSM8K = REPO.parent / "shared" / "data" / "gsm8k"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def data(tmp: Path) -> tuple[Path, Path]:
    if (GSM8K / "test.jsonl").is_file() and (GSM8K / "train.jsonl").is_file():
        return GSM8K / "test.jsonl", GSM8K / "train.jsonl"
    sys.path.insert(0, str(REPO))
    from infersweep.evals import dataset

    return dataset.write(tmp, n_test=1319, n_train=200)


def one_run(test: Path, train: Path, concurrency: int, accuracy: float) -> dict:
    port = free_port()
    sim = subprocess.Popen([sys.executable, "-m", "infersweep", "sim", "serve", "--port",
                            str(port), "--served-model-name", "m", "--eval-answer-key", str(test),
                            "--eval-accuracy", str(accuracy)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(300):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1)
                break
            except OSError:
                time.sleep(0.1)
        with tempfile.TemporaryDirectory(prefix="eval-speed-") as tmp:
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.monotonic()
            p = subprocess.run([sys.executable, "-m", "infersweep", "eval", "gsm8k", "--base-url",
                                f"http://127.0.0.1:{port}", "--model", "m", "--output-dir", tmp,
                                "--test-file", str(test), "--train-file", str(train),
                                "--concurrency", str(concurrency), "--no-progress"],
                               capture_output=True, text=True)
            wall = time.monotonic() - t0
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            if p.returncode != 0:
                raise SystemExit(f"eval failed ({p.returncode}):\n{p.stderr[-3000:]}")
            s = json.loads((Path(tmp) / "eval.json").read_text())
        return {"wall_s": round(wall, 1),
                "eval_cpu_s": round(after.ru_utime + after.ru_stime
                                    - before.ru_utime - before.ru_stime, 1),
                "questions": s["n-samples"],
                "strict": s["scores"]["strict-match"]["exact_match"],
                "flexible": s["scores"]["flexible-extract"]["exact_match"],
                "lm_eval_s": s["duration-s"], "requests": s["requests"]["ok"],
                "retries": s["requests"]["retries"]}
    finally:
        sim.terminate()
        sim.wait(10)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--concurrency", type=int, default=128)
    ap.add_argument("--accuracy", type=float, default=0.96)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        test, train = data(Path(tmp))
        for i in range(a.runs):
            print(json.dumps({"run": i + 1, **one_run(test, train, a.concurrency, a.accuracy)}),
                  flush=True)


if __name__ == "__main__":
    main()
