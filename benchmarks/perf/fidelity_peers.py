"""Run the peer clients (aiperf, guidellm) for ``client_fidelity.py``.

Both come from PyPI and live in a separate virtualenv (``pip install aiperf guidellm``); they
never share the project's environment. Both run fully offline: the only address they talk to is
the loopback simulator, and the tokenizer is the word-level one ``fidelity_tokenizer.py``
writes (its word counts equal the simulator's).

    VENV/bin/python benchmarks/perf/fidelity_tokenizer.py TOKDIR
    python benchmarks/perf/fidelity_peers.py --peers infersweep infersweep-user aiperf guidellm \
        --conc 64 256 1024 --peers-venv VENV --tokenizer-dir TOKDIR [--lock FILE] [--json-out F]

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

import argparse
import contextlib
import fcntl
import glob
import json
import os
import resource
import shutil
import subprocess
import tempfile
import threading
import time
import urllib.request
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


class TreeCPU(threading.Thread):
    """Samples the CPU time (user + sys, exited-and-reaped children included) of a process
    tree every ``period`` seconds, stamped with CLOCK_MONOTONIC like the simulator's records."""

    TICK = os.sysconf("SC_CLK_TCK")

    def __init__(self, pid: int, period: float = 0.25):
        super().__init__(daemon=True)
        self.pid, self.period, self.samples = pid, period, []
        self._stop_evt = threading.Event()

    def _tree_cpu(self) -> float:
        todo, ticks = [self.pid], 0
        while todo:
            pid = todo.pop()
            try:
                with open(f"/proc/{pid}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                ticks += sum(int(x) for x in fields[11:15])  # utime stime cutime cstime
                for task in os.listdir(f"/proc/{pid}/task"):
                    with open(f"/proc/{pid}/task/{task}/children") as f:
                        todo += [int(c) for c in f.read().split()]
            except (OSError, ValueError, IndexError):
                continue
        return ticks / self.TICK

    def run(self) -> None:
        with contextlib.suppress(OSError, AttributeError):
            os.sched_setaffinity(0, {0})  # this thread only: keep the client's core to itself
        while not self._stop_evt.is_set():
            self.samples.append((time.monotonic_ns(), self._tree_cpu()))
            self._stop_evt.wait(self.period)

    def stop(self) -> None:
        self._stop_evt.set()
        self.join()

    def between(self, t0_ns: int, t1_ns: int) -> float | None:
        """CPU seconds spent between two monotonic instants (linear interpolation)."""
        if len(self.samples) < 2 or t0_ns < self.samples[0][0] or t1_ns > self.samples[-1][0]:
            return None
        ts = [t for t, _ in self.samples]

        def at(t):
            i = next(k for k in range(1, len(ts)) if ts[k] >= t)
            (ta, ca), (tb, cb) = self.samples[i - 1], self.samples[i]
            return ca + (cb - ca) * (t - ta) / max(tb - ta, 1)

        return at(t1_ns) - at(t0_ns)


def _window_cpu(url: str, sampler: TreeCPU) -> float | None:
    """The client tree's CPU from the first request's arrival to the last chunk sent."""
    with urllib.request.urlopen(url + "/debug/timings", timeout=60) as r:
        rows = [json.loads(x) for x in r.read().splitlines()]
    rows = [x for x in rows if x["completion_tokens"] == OSL]
    if not rows:
        return None
    return sampler.between(min(x["arrival_ns"] for x in rows), max(x["send_ns"][-1] for x in rows))


def _run(cmd: list[str], env: dict, timeout: float, url: str) -> tuple[int, str, float, float | None]:
    """Run a peer; returns (exit code, output tail, CPU to exit, CPU over the server window)."""
    cpu0 = _child_cpu()
    with tempfile.TemporaryFile("w+") as log:
        p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, text=True, env=env)
        sampler = TreeCPU(p.pid)
        sampler.start()
        try:
            rc = p.wait(timeout=timeout)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
            sampler.stop()
        log.seek(0)
        tail = log.read()[-1500:]
    return rc, tail, _child_cpu() - cpu0, _window_cpu(url, sampler)


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
    rc, tail, cpu, cpu_w = _run(aiperf_cmd(venv, url, conc, n, art), _offline_env(tok), 1800, url)
    found = glob.glob(str(art / "**" / "profile_export_aiperf.json"), recursive=True)
    if rc != 0 or not found:
        raise RuntimeError(f"aiperf failed ({rc}): {tail}")
    m = json.loads(Path(found[0]).read_text())
    rec = m.get("records", m)

    def g(name, stat):
        v = rec.get(name) or {}
        return v.get(stat) if isinstance(v, dict) else None

    return {"itl_mean": g("inter_token_latency", "avg"), "itl_p99": g("inter_token_latency", "p99"),
            "icl_mean": g("inter_chunk_latency", "avg"), "icl_p99": g("inter_chunk_latency", "p99"),
            "ttft_mean": g("time_to_first_token", "avg"),
            "tok_s": g("output_token_throughput", "avg"),
            "completed": g("request_count", "avg"), "cpu_exit_s": cpu, "cpu_window_s": cpu_w,
            "per_request_itl": True}


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
    rc, tail, cpu, cpu_w = _run(cmd, env, 1800, url)
    if rc != 0 or not res.exists():
        raise RuntimeError(f"guidellm failed ({rc}): {tail}")
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
            "cpu_exit_s": cpu, "cpu_window_s": cpu_w, "per_request_itl": True}


# --- side-by-side runner ------------------------------------------------------------------


def _tpot(out: Path) -> tuple[float | None, float | None]:
    r = json.loads((out / "ours.json").read_text())
    return r.get("mean_tpot_ms"), r.get("p99_tpot_ms")


def case(client: str, conc: int, n: int, args, tmp: Path) -> dict:
    import client_fidelity as cf  # the harness imports this module; import it back lazily

    srv = cf.Server(args.itl_ms)
    try:
        srv.reset()
        venv, tok = Path(args.peers_venv or "."), Path(args.tokenizer_dir or ".")
        if client.startswith("infersweep"):  # "infersweep-user": user-space clock, like the peers
            rep = cf.run_ours(srv.url, conc, n, 1, tmp, "user" if client.endswith("-user") else None)
            rep["tpot_mean"], rep["tpot_p99"] = _tpot(tmp)
        elif client == "aiperf":
            rep = run_aiperf(venv, tok, srv.url, conc, n, tmp)
        else:
            rep = run_guidellm(venv, tok, srv.url, conc, n, tmp)
        rows = srv.truth()
    finally:
        srv.stop()
    if not rows:
        raise RuntimeError(f"{client}: the server recorded no complete request")
    truth = cf.truth_stats(rows)
    truth.update({f"per_req_{k}": v for k, v in cf.per_request_truth(rows).items()})
    return {"client": client, "conc": conc, "itl_ms": args.itl_ms, "n": n, "report": rep,
            "truth": truth}


def table_row(res: dict) -> str:
    r, t = res["report"], res["truth"]

    def pair(a, b, fmt="{:.2f}"):
        return "-" if a is None else f"{fmt.format(a)} / {fmt.format(b)}"

    def err(a, b):
        return "-" if a is None else f"{100 * (a - b) / b:+.1f}"

    if res["client"].startswith("infersweep"):  # its per-request figure is TPOT, its ITL is per chunk
        per_req, pooled = (r.get("tpot_mean"), r.get("tpot_p99")), (r["itl_mean"], r["itl_p99"])
    else:
        per_req, pooled = (r["itl_mean"], r["itl_p99"]), (r.get("icl_mean"), r.get("icl_p99"))
    tp, tg = (t["per_req_itl_mean"], t["per_req_itl_p99"]), (t["itl_mean"], t["itl_p99"])
    cpu_w = r.get("cpu_window_s")
    cpu = (f"{1000 * cpu_w / t['chunks']:.3f}" if cpu_w is not None else "-") + \
        f" ({1000 * r['cpu_exit_s'] / t['chunks']:.3f})"
    conc_rep = r.get("conc_reported")
    return (f"| {res['client']} | {res['conc']} | {res['n']} | "
            f"{pair(*tp)} | {pair(*per_req)} | {err(per_req[0], tp[0])} / {err(per_req[1], tp[1])} | "
            f"{pair(*tg)} | {pair(*pooled)} | {err(pooled[0], tg[0])} / {err(pooled[1], tg[1])} | "
            f"{t['ttft_mean']:.1f} | {(r['ttft_mean'] or 0):.1f} | "
            f"{(r['ttft_mean'] or 0) - t['ttft_mean']:+.1f} | {(r['tok_s'] or 0):,.0f} | "
            f"{t['chunks_per_s']:,.0f} | {t['conc_avg']:.0f} / {t['conc_peak']}"
            f"{f' ({conc_rep:.0f})' if conc_rep is not None else ''} | {cpu} |")


TABLE_HEADER = (
    "| client | C | N | per-request ITL*, true mean / p99 | reported | err % mean / p99 | "
    "pooled chunk gaps, true mean / p99 | reported | err % mean / p99 | true TTFT | rep. TTFT | "
    "TTFT err ms | rep. tok/s | true chunks/s | server conc. avg / peak (client's own) | "
    "CPU s / 1k chunks, window (to exit) |\n"
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")


@contextlib.contextmanager
def _lock(path: str | None):
    if not path:
        yield
        return
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def main() -> None:
    ap = argparse.ArgumentParser(description="aiperf and guidellm side by side with infersweep "
                                             "against the simulator's ground truth")
    ap.add_argument("--peers", nargs="*", default=["aiperf", "guidellm"],
                    choices=["infersweep", "infersweep-user", "aiperf", "guidellm"])
    ap.add_argument("--conc", type=int, nargs="*", default=[64, 256])
    ap.add_argument("--itl-ms", type=float, default=20.0)
    ap.add_argument("--num-prompts", type=int, default=0, help="override N = max(4C, 200)")
    ap.add_argument("--peers-venv", required=True, help="virtualenv with aiperf and guidellm")
    ap.add_argument("--tokenizer-dir", required=True, help="written by fidelity_tokenizer.py")
    ap.add_argument("--lock", default=None, help="flock this file around each run")
    ap.add_argument("--json-out", default=None)
    args = ap.parse_args()
    print(TABLE_HEADER, flush=True)
    results = []
    for conc in args.conc:
        n = args.num_prompts or max(4 * conc, 200)
        for client in args.peers:
            with tempfile.TemporaryDirectory() as tmp, _lock(args.lock):
                try:
                    res = case(client, conc, n, args, Path(tmp))
                except (RuntimeError, subprocess.SubprocessError) as exc:
                    print(f"| {client} | {conc} | {n} | failed: {str(exc)[-600:]!r} |", flush=True)
                    results.append({"client": client, "conc": conc, "error": str(exc)})
                    continue
            results.append(res)
            print(table_row(res), flush=True)
            if args.json_out:
                Path(args.json_out).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
