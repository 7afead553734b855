"""Wall time of `infersweep report build` on 20 staged runs (the issue's target: under 10 s),
and plotly's own way of writing the same charts (`write_html`, plotly.js inlined in each file)
measured in the same run as the peer.

Each run has CONFIGS configs of two topologies (4 + 3 concurrencies), processed by the real
results code and saved as a results artifact (aggregate/results.json, evals.json); the build
is timed from those folders (`--from-run`) and from a SQLite store they were staged into
(`--db`), writing the index, a page per config (every run's traces) and a page per run.

    python benchmarks/perf/report_build.py [--runs 20] [--configs 10] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests import reportruns  # noqa: E402  (the run folders the report tests use)


def make_runs(root: Path, runs: int, configs: int) -> list[Path]:
    aggs = []
    for i in range(runs):
        folder = root / f"run-{i:02d}"
        for c in range(configs):
            reportruns.write_run(folder, str(33_000_000 + i), seed=i % 5, scale_down=1.0,
                                 key=f"cfg-{c:02d}", evals=(0.95,) if c == 0 else ())
        out = root / f"artifact-{i:02d}" / "aggregate"  # as a run's results artifact
        out.mkdir(parents=True)
        for cmd in (["results", "collect", str(folder), "-o", str(out / "results.json")],
                    ["eval", "collect", str(folder), "-o", str(out / "evals.json")]):
            subprocess.run([sys.executable, "-m", "infersweep", *cmd], check=True,
                           capture_output=True)
        aggs.append(out.parent)
    return aggs


def make_store(aggs: list[Path], db: Path) -> str:
    url = f"sqlite:///{db}"
    for a in aggs:
        subprocess.run([sys.executable, "-m", "infersweep", "store", "ingest", str(a), "--db",
                        url], check=True, capture_output=True)
    return url


def ours(sources: list[str], out: Path, repeat: int) -> tuple[float, str]:
    cmd = [sys.executable, "-m", "infersweep", "report", "build", "--out", str(out),
           "--thresholds", str(REPO / "configs" / "eval-thresholds.yaml"), *sources]
    times, line = [], ""
    for _ in range(repeat):
        start = time.perf_counter()
        proc = subprocess.run(cmd, check=True, capture_output=True, text=True)
        times.append(time.perf_counter() - start)
        line = proc.stdout.splitlines()[0]
    return statistics.median(times), line


def peer(aggs: list[Path], out: Path, repeat: int, js) -> tuple[float, int]:
    """plotly's write_html of every chart of the same site (validated figures), each a
    standalone file: plotly.js inlined (``js=True``, what one gets from plotly alone) or
    shared (``js="directory"``), in a fresh process. No tables, no index."""
    script = f"""
import sys, time
sys.path.insert(0, {str(REPO)!r})
from pathlib import Path
import plotly.graph_objects as go
from infersweep.report import charts, fromrun, views
start = time.perf_counter()
runs = [fromrun.load(p) for p in {[str(a) for a in aggs]!r}]
site = views.arrange(runs, None)
out = Path({str(out)!r}); out.mkdir(exist_ok=True)
n = 0
for key, view in site.configs.items():
    for c in views.charts_of([(site.index_of(r), r, p) for r, p in view.points]):
        go.Figure(charts.figure(c)).write_html(out / f"c{{n}}.html", include_plotlyjs={js!r})
        n += 1
for i, run in enumerate(site.runs):
    for key in site.run_configs[i]:
        pts = [(i, run, p) for p in run.points if p["config_key"] == key]
        for c in views.charts_of(pts):
            go.Figure(charts.figure(c)).write_html(out / f"c{{n}}.html", include_plotlyjs={js!r})
            n += 1
print(n)
"""
    times, n = [], 0
    for _ in range(repeat):
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, "-c", script], check=True, capture_output=True,
                              text=True)
        times.append(time.perf_counter() - start)
        n = int(proc.stdout.strip())
    return statistics.median(times), n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--configs", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        aggs = make_runs(t / "in", args.runs, args.configs)
        points = sum(len(json.loads((a / "aggregate" / "results.json").read_text())["rows"])
                     for a in aggs)
        mine, line = ours([x for a in aggs for x in ("--from-run", str(a))], t / "site",
                          args.repeat)
        url = make_store(aggs, t / "store.db")
        from_db, db_line = ours(["--db", url], t / "site-db", args.repeat)
        size = sum(p.stat().st_size for p in (t / "site").rglob("*") if p.is_file())
        theirs, n = peer(aggs, t / "peer", args.repeat, True)
        peer_size = sum(p.stat().st_size for p in (t / "peer").rglob("*") if p.is_file())
        shared, _ = peer(aggs, t / "peer2", args.repeat, "directory")
        shared_size = sum(p.stat().st_size for p in (t / "peer2").rglob("*") if p.is_file())
    print(f"{args.runs} runs x {args.configs} configs, {points} points; median of "
          f"{args.repeat}, fresh processes")
    print(f"report build --from-run: {line}")
    print(f"report build --db: {db_line}")
    print("| what | wall (s) | written |")
    print("|---|---|---|")
    print(f"| `report build --from-run` x {args.runs} (all pages, tables, {n} charts, one "
          f"plotly.js) | {mine:.2f} | {size / 1e6:.1f} MB |")
    print(f"| `report build --db` (the same runs staged in a SQLite store) | {from_db:.2f} | "
          f"{size / 1e6:.1f} MB |")
    print(f"| plotly `write_html` of the same {n} charts, plotly.js inlined | {theirs:.2f} | "
          f"{peer_size / 1e6:.1f} MB |")
    print(f"| plotly `write_html` of the same {n} charts, one shared plotly.min.js | "
          f"{shared:.2f} | {shared_size / 1e6:.1f} MB |")
    print(f"ratio: {theirs / mine:.1f}x faster than plotly.js inlined, "
          f"{shared / mine:.1f}x than shared")


if __name__ == "__main__":
    main()
