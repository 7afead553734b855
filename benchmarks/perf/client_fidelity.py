"""Client fidelity benchmark: how faithfully and cheaply a client measures a streaming server.

The ground truth is the engine simulator in its fixed-schedule mode (first token after 50 ms,
then one single-token chunk every ``--itl-ms`` on absolute deadlines), pinned to core 0; it
records when it wrote every chunk. The client under test runs pinned to core 1, closed loop at
concurrency C, ~1,024 input / 256 output tokens, ignore-eos, N = max(4C, 200) requests.

Reported vs true: pooled per-gap ITL (mean, p99), mean TTFT, achieved tokens/s, true chunks/s,
server-side concurrency (time average over the run window) and client CPU per 1,000 chunks.

    python benchmarks/perf/client_fidelity.py --conc 64 256 1024 --conc-40ms 2048 \
        [--peers-venv /path/to/venv --peers aiperf guidellm]

``--bundle FILE.pyz --bundle-python PY`` measures the bundled client (``bench bundle``) on
interpreter PY instead of the installed one: with PY a venv without site packages it runs on
its stdlib fallbacks (json, asyncio's loop, pure-Python statistics), as in an engine container.

``--schemes http https`` runs every infersweep case over both, one after the other: the https
server is the same simulator with a self-signed certificate (``openssl req``), trusted by the
client with ``--ca-cert``.

Peers (aiperf, guidellm) run from a separate virtualenv with an offline word-level tokenizer
built by ``fidelity_tokenizer.py`` (the simulator counts whitespace words, so counts agree).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import numpy as np
from fidelity_peers import run_aiperf, run_guidellm

HERE = Path(__file__).resolve().parent
ISL, OSL, TTFT_MS = 1024, 256, 50.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pin(core: int) -> list[str]:
    return ["taskset", "-c", str(core)] if shutil.which("taskset") and os.cpu_count() > 1 else []


def http(url: str, data: bytes | None = None, timeout: float = 60, ca: Path | None = None) -> bytes:
    req = urllib.request.Request(url, data=data, method="POST" if data is not None else "GET")
    ctx = ssl.create_default_context(cafile=str(ca)) if ca else None
    with urllib.request.urlopen(req, timeout=timeout, context=ctx) as r:
        return r.read()


def self_signed(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 (its own CA) and its key."""
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", str(key), "-out",
                    str(cert), "-days", "1", "-subj", "/CN=127.0.0.1", "-addext",
                    "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True)
    return cert, key


class Server:
    def __init__(self, itl_ms: float, tls: tuple[Path, Path] | None = None):
        self.port = free_port()
        self.ca = tls[0] if tls else None
        self.url = f"{'https' if tls else 'http'}://127.0.0.1:{self.port}"
        tls_args = ["--tls-cert", str(tls[0]), "--tls-key", str(tls[1])] if tls else []
        self.proc = subprocess.Popen(
            [*pin(0), sys.executable, "-m", "infersweep", "sim", "serve", "--port", str(self.port),
             "--served-model-name", "m", "--max-num-seqs", "100000", "--max-model-len", "100000",
             "--fixed-ttft-ms", str(TTFT_MS), "--fixed-itl-ms", str(itl_ms), *tls_args],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(100):
            try:
                http(self.url + "/health", timeout=1, ca=self.ca)
                return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("ground-truth server did not start")

    def reset(self) -> None:
        http(self.url + "/debug/reset", b"", ca=self.ca)

    def truth(self) -> list[dict]:
        rows = [json.loads(x) for x in http(self.url + "/debug/timings", ca=self.ca).splitlines()]
        return [r for r in rows if r["completion_tokens"] == OSL]  # drop probes/warm-ups

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)


def truth_stats(rows: list[dict], conc: int = 0) -> dict:
    gaps = np.concatenate([np.diff(np.asarray(r["send_ns"], dtype=np.int64)) for r in rows]) / 1e6
    ttft = np.array([(r["send_ns"][0] - r["arrival_ns"]) / 1e6 for r in rows])
    t0 = min(r["arrival_ns"] for r in rows)
    t1 = max(r["send_ns"][-1] for r in rows)
    window = (t1 - t0) / 1e9
    chunks = sum(len(r["send_ns"]) for r in rows)
    busy = sum(r["send_ns"][-1] - r["arrival_ns"] for r in rows) / 1e9
    # TTFT of the requests after the first wave (which also pays for connecting)
    by_arrival = sorted(rows, key=lambda r: r["arrival_ns"])[conc:]
    later = [(r["send_ns"][0] - r["arrival_ns"]) / 1e6 for r in by_arrival]
    # peak concurrency from arrival/last-send events
    ev = sorted([(r["arrival_ns"], 1) for r in rows] + [(r["send_ns"][-1], -1) for r in rows])
    cur = peak = 0
    for _, d in ev:
        cur += d
        peak = max(peak, cur)
    return {"itl_mean": float(gaps.mean()), "itl_p99": float(np.percentile(gaps, 99)),
            "ttft_mean": float(ttft.mean()), "chunks": chunks, "window_s": window,
            "ttft_later_mean": float(np.mean(later)) if later else None,
            "chunks_per_s": chunks / window, "conc_avg": busy / window, "conc_peak": peak,
            "requests": len(rows)}


CLIENT = [sys.executable, "-m", "infersweep", "bench", "serve"]  # or the bundle (--bundle)


def run_ours(url: str, conc: int, n: int, workers: int, out: Path, ts: str | None = None,
             ca: Path | None = None, warmups: int = 0) -> dict:
    cmd = [*pin(1), *CLIENT, "--backend", "openai",
           "--base-url", url, "--model", "m", "--dataset-name", "random",
           "--random-input-len", str(ISL), "--random-output-len", str(OSL),
           "--random-range-ratio", "1.0", "--num-prompts", str(n), "--max-concurrency", str(conc),
           "--request-rate", "inf", "--ignore-eos", "--num-workers", str(workers),
           "--save-result", "--result-dir", str(out), "--result-filename", "ours.json",
           "--disable-tqdm", *(["--timestamp-source", ts] if ts else []),
           *(["--ca-cert", str(ca)] if ca else []), "--num-warmups", str(warmups)]
    cpu0 = _child_cpu()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    cpu = _child_cpu() - cpu0
    r = json.loads((out / "ours.json").read_text())
    c = r["infersweep"]["client"]
    recs = [json.loads(x) for x in (out / "ours.records.jsonl").read_text().splitlines()[1:]]
    later = [x["first_s"] - x["start_s"] for x in recs if x["ok"] and x["id"] >= conc]
    return {"itl_mean": r["mean_itl_ms"], "itl_p99": r["p99_itl_ms"], "ttft_mean": r["mean_ttft_ms"],
            "ttft_later_mean": 1000 * float(np.mean(later)) if later else None,
            "tok_s": r["output_throughput"], "completed": r["completed"],
            "cpu_window_s": c["cpu_s"], "cpu_exit_s": cpu, "loop_lag_p99_ms": c["loop_lag_p99_ms"],
            "timestamps": c.get("timestamps"), "per_request_itl": False}


def _child_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def per_request_truth(rows: list[dict]) -> dict:
    """Per-request mean ITL (last-first)/(n-1), the statistic peers headline as 'ITL'."""
    per = np.array([(r["send_ns"][-1] - r["send_ns"][0]) / 1e6 / (len(r["send_ns"]) - 1) for r in rows])
    return {"itl_mean": float(per.mean()), "itl_p99": float(np.percentile(per, 99))}


def one(client: str, conc: int, itl_ms: float, args, tmp: Path, scheme: str = "http") -> dict:
    n = args.num_prompts or max(4 * conc, 200)
    srv = Server(itl_ms, self_signed(tmp) if scheme == "https" else None)
    try:
        srv.reset()
        if client == "infersweep":
            workers = args.workers_2048 if conc >= 2048 else 1
            rep = run_ours(srv.url, conc, n, workers, tmp, args.timestamp_source, srv.ca,
                           args.num_warmups)
            src = (rep.get("timestamps") or {}).get("source", "?")
            what = "bundle" if args.bundle else "infersweep"
            rep["client"] = f"{what} {scheme} ({workers} proc, {src})"
        elif client == "aiperf":
            rep = run_aiperf(Path(args.peers_venv), Path(args.tokenizer_dir), srv.url, conc, n, tmp)
            rep["client"] = "aiperf"
        else:
            rep = run_guidellm(Path(args.peers_venv), Path(args.tokenizer_dir), srv.url, conc, n, tmp)
            rep["client"] = "guidellm"
        rows = srv.truth()
        if client == "infersweep" and args.num_warmups:  # warm-ups all arrive before the run
            rows = sorted(rows, key=lambda r: r["arrival_ns"])[args.num_warmups:]
    finally:
        srv.stop()
    if not rows:
        raise RuntimeError(f"{client}: the server recorded no complete request")
    truth = truth_stats(rows, conc)
    if rep.get("per_request_itl"):
        truth.update({f"per_req_{k}": v for k, v in per_request_truth(rows).items()})
    return {"conc": conc, "itl_ms": itl_ms, "n": n, "scheme": scheme, "report": rep,
            "truth": truth}


def row(res: dict) -> str:
    r, t = res["report"], res["truth"]
    base_itl = (t.get("per_req_itl_mean", t["itl_mean"]), t.get("per_req_itl_p99", t["itl_p99"])) \
        if r.get("per_request_itl") else (t["itl_mean"], t["itl_p99"])

    def err(a, b):
        return f"{100 * (a - b) / b:+.1f}" if a is not None else "n/a"

    cpu_w = r.get("cpu_window_s")
    per1k_w = f"{1000 * cpu_w / t['chunks']:.4f}" if cpu_w is not None else "-"
    per1k_x = f"{1000 * r['cpu_exit_s'] / t['chunks']:.4f}"
    star = "*" if r.get("per_request_itl") else ""
    later_err = (f"{r['ttft_later_mean'] - t['ttft_later_mean']:+.1f}"
                 if r.get("ttft_later_mean") is not None and t.get("ttft_later_mean") else "-")
    return (f"| {r['client']} | {res['conc']} | {res['itl_ms']:g} | {res['n']} | "
            f"{base_itl[0]:.2f} / {base_itl[1]:.2f}{star} | "
            f"{(r['itl_mean'] or 0):.2f} / {(r['itl_p99'] or 0):.2f} | "
            f"{err(r['itl_mean'], base_itl[0])} / {err(r['itl_p99'], base_itl[1])} | "
            f"{t['ttft_mean']:.1f} | {(r['ttft_mean'] or 0):.1f} | "
            f"{(r['ttft_mean'] or 0) - t['ttft_mean']:+.1f} | {(r['tok_s'] or 0):.0f} | "
            f"{t['chunks_per_s']:.0f} | {t['conc_avg']:.0f} / {t['conc_peak']} | "
            f"{per1k_w} ({per1k_x}) | {r.get('loop_lag_p99_ms', float('nan')):.1f} | "
            f"{later_err} |")


HEADER = ("| client | C | true ITL ms | N | true ITL mean / p99 | reported ITL mean / p99 | "
          "ITL err % mean / p99 | true TTFT | rep. TTFT | TTFT err ms | rep. tok/s | "
          "true chunks/s | server conc. avg / peak | CPU s/1k chunks (to exit) | loop lag p99 ms | "
          "TTFT err after 1st wave ms |\n"
          "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--conc", type=int, nargs="*", default=[64, 256, 1024])
    ap.add_argument("--conc-40ms", type=int, nargs="*", default=[2048])
    ap.add_argument("--itl-ms", type=float, default=20.0)
    ap.add_argument("--num-prompts", type=int, default=0, help="override N = max(4C, 200)")
    ap.add_argument("--num-warmups", type=int, default=0,
                    help="infersweep warm-up requests before the measured ones (with C or more, "
                         "the measured requests reuse connections: no connect or TLS handshake)")
    ap.add_argument("--workers-2048", type=int, default=2)
    ap.add_argument("--peers", nargs="*", default=[], choices=["aiperf", "guidellm"])
    ap.add_argument("--peer-conc", type=int, nargs="*", default=[256])
    ap.add_argument("--peers-venv", default=None)
    ap.add_argument("--tokenizer-dir", default=None)
    ap.add_argument("--json-out", default=None)
    ap.add_argument("--bundle", default=None, help="measure this bundled client (.pyz) instead")
    ap.add_argument("--bundle-python", default=sys.executable,
                    help="the interpreter that runs --bundle (e.g. a venv with no site packages)")
    ap.add_argument("--schemes", nargs="*", default=["http"], choices=["http", "https"],
                    help="run each infersweep case over these, in turn (https: self-signed)")
    ap.add_argument("--timestamp-source", choices=["auto", "kernel", "user"], default=None,
                    help="passed to infersweep bench serve (default: its own default)")
    args = ap.parse_args()
    if args.bundle:
        CLIENT[:] = [args.bundle_python, "-I", args.bundle, "serve"]
    results = []
    cases = [("infersweep", c, args.itl_ms, sch) for c in args.conc for sch in args.schemes]
    cases += [("infersweep", c, 40.0, sch) for c in args.conc_40ms for sch in args.schemes]
    cases += [(p, c, args.itl_ms, "http") for p in args.peers for c in args.peer_conc]
    print(HEADER, flush=True)
    for client, conc, itl, scheme in cases:
        with tempfile.TemporaryDirectory() as tmp:
            try:
                res = one(client, conc, itl, args, Path(tmp), scheme)
            except (RuntimeError, subprocess.CalledProcessError) as exc:
                print(f"| {client} | {conc} | {itl:g} | failed: {str(exc)[:400]!r} |", flush=True)
                results.append({"client": client, "conc": conc, "error": str(exc)})
                continue
        results.append(res)
        print(row(res), flush=True)
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
