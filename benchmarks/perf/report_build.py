"""Wall time of `infersweep report build` on 20 staged runs (the issue's target: under 10 s),
and plotly's own way of writing the same charts (`write_html`, plotly.js inlined in each file)
measured in the same run as the peer.

Each run has CONFIGS configs of two topologies (4 + 3 concurrencies), processed by the real
results code and saved as a results artifact (aggregate/results.json, evals.json); the build
is timed from those folders (`--from-run`) and from a SQLite store they were staged into
(`--db`), writing the index, a page per config (every run's traces) and a page per run.

    python benchmarks/perf/report_build.py [--runs 20] [--configs 10] [--repeat 3]

The explorer at scale (issue 24: 1,000 staged runs x 200 points): synthetic staged runs made
in memory (20 configs over four GPUs, two precisions, ISL/OSL 8k/1k and 1k/1k, 5 concurrencies
per series), the explorer's data file and page written as `report build` writes them, the
whole site built for a slice of them, and the page opened in headless Chromium (Selenium and
chromedriver) until its first chart is drawn (median of REPEAT fresh browsers), then switched to
the view of every point; and plotly.js's basic and whole bundles alone, for comparison:

    python benchmarks/perf/report_build.py --explorer-runs 1000 --points 200 [--full-runs 50]
        [--repeat 3]
"""

from __future__ import annotations

import argparse
import contextlib
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


HW = (("mi355x", "atom"), ("mi325x", "sglang"), ("b200", "vllm"), ("h200", "trt"))


def synthetic_runs(n_runs: int, points: int) -> list:
    """Staged runs of ``points`` points each: configs x two ISL/OSL x 5 concurrencies."""
    import random

    from infersweep.config.schema import load_schema
    from infersweep.store.model import StagedRun

    blank = dict.fromkeys(load_schema("results-row")["properties"])  # every field a row has
    rng = random.Random(7)
    concs = (4, 16, 64, 128, 256)
    per_config = 2 * len(concs)
    out = []
    for r in range(n_runs):
        pts = []
        for c in range(points // per_config):
            hw, fw = HW[c % len(HW)]
            prec = ("fp4", "fp8")[(c // len(HW)) % 2]
            key = f"model{c % 2}-{prec}-{hw}-{fw}-{c}"
            for isl, osl in ((8192, 1024), (1024, 1024)):
                for i, conc in enumerate(concs):
                    tput = 500.0 * (i + 1) * rng.uniform(0.8, 1.2)
                    pts.append({
                        **blank, "config_key": key, "model": f"model-{c % 2}", "hw": hw, "framework": fw,
                        "precision": prec, "spec_decoding": "none", "disagg": c % 3 == 0,
                        "isl": isl, "osl": osl, "conc": conc, "scale_down": 1,
                        "recipe_name": f"{key}-r", "topology": f"tp{8 >> (c % 3)}",
                        "image": f"registry/{fw}:v{r % 7}", "recipe_fingerprint": f"{c:064x}",
                        "job_id": f"job-{r}-{c}", "run_id": str(40_000_000 + r), "attempt": 1,
                        "successful": True, "tput_per_gpu": tput,
                        "input_tput_per_gpu": tput * 0.8, "output_tput_per_gpu": tput * 0.2,
                        "median_intvty": 120.0 / (i + 1) * rng.uniform(0.9, 1.1),
                        "median_e2el": 4.0 * (i + 1), "median_ttft": 0.2 * (i + 1),
                        "p90_ttft": 0.3 * (i + 1), "p99_ttft": 0.5 * (i + 1)})
        day = 1 + r % 28
        out.append(StagedRun(run_id=str(40_000_000 + r), attempt=1, source="github",
                             staged_at=f"2026-{1 + r // 28 % 12:02d}-{day:02d}T00:00:{r % 60:02d}Z",
                             created_at=f"2026-{1 + r // 28 % 12:02d}-{day:02d}T00:00:00Z",
                             points=pts))
    return out


@contextlib.contextmanager
def _chromium():
    import shutil

    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = shutil.which("chromium")
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--host-resolver-rules=MAP * ~NOTFOUND", "--window-size=1280,800"):
        opts.add_argument(flag)
    driver = webdriver.Chrome(options=opts,
                              service=Service(executable_path=shutil.which("chromedriver")))
    try:
        driver.set_page_load_timeout(120)
        yield driver
    finally:
        driver.quit()


def _until(driver, script: str, what: str, timeout: float = 120.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = driver.execute_script(script)
        if value is not None:
            return value
        time.sleep(0.05)
    raise RuntimeError(f"{what} never happened")


DRAWN = ("const m = performance.getEntriesByName('explorer-drawn');"
         "return m.length ? m[0].startTime / 1000 : null;")
# every point of every run, no frontier: 200,000 points, drawn by WebGL (the whole bundle)
HEAVY_VIEW = "#model=&seq=&run=all&frontier=0"


def page_seconds(page: Path) -> tuple[float, float]:
    """A fresh browser each time: navigation start to the explorer's 'explorer-drawn' mark
    (the first chart), then the heaviest view (every point) from the moment it is asked for
    until drawn, which loads plotly's whole bundle first."""
    with _chromium() as driver:
        driver.get(page.as_uri())
        first = _until(driver, DRAWN, "the explorer's first chart")
        driver.execute_script("performance.clearMarks('explorer-drawn');"
                              "window.heavyStart = performance.now();"
                              f"location.hash = {HEAVY_VIEW!r};")
        heavy = _until(driver, "const m = performance.getEntriesByName('explorer-drawn');"
                       "return m.length ? (m[0].startTime - heavyStart) / 1000 : null;",
                       "the view of every point")
        return first, heavy


def bundle_seconds(site: Path, bundle: str) -> float:
    """A page with only ``bundle`` and an empty chart: navigation start to drawn."""
    page = site / f"bundle-{bundle}.html"
    page.write_text(f'<!DOCTYPE html><div id="c"></div><script src="{bundle}"></script>'
                    '<script>Plotly.newPlot("c", [{x: [1], y: [1]}]).then(() => '
                    'performance.mark("explorer-drawn"));</script>', encoding="utf-8")
    try:
        with _chromium() as driver:
            driver.get(page.as_uri())
            return _until(driver, DRAWN, f"{bundle}'s chart")
    finally:
        page.unlink()


def explorer_scale(n_runs: int, points: int, full_runs: int, repeat: int) -> None:
    from infersweep.report import build, costs, explorerdata
    from infersweep.report.site import PLOTLY_BASIC_JS, BuildSummary, _Writer

    start = time.perf_counter()
    runs = synthetic_runs(n_runs, points)
    made = time.perf_counter() - start
    gpu = costs.load(REPO / "configs" / "gpu-costs.yaml")
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        site = t / "explorer"
        site.mkdir()
        start = time.perf_counter()
        w = _Writer(site, BuildSummary(site), "bench")
        from infersweep.report import charts as chartmod

        (site / "plotly.min.js").write_text(chartmod.plotly_js(), encoding="utf-8")
        (site / "report.css").write_text("", encoding="utf-8")
        w.explorer(runs, gpu)
        explorer_s = time.perf_counter() - start
        data_mb = (site / explorerdata.FILE).stat().st_size / 1e6
        site_mb = sum(p.stat().st_size for p in site.rglob("*") if p.is_file()) / 1e6
        loads = [page_seconds(site / "explorer.html") for _ in range(repeat)]
        drawn = statistics.median(f for f, _ in loads)
        heavy = statistics.median(h for _, h in loads)
        bundles = {b: statistics.median(bundle_seconds(site, b) for _ in range(repeat))
                   for b in (PLOTLY_BASIC_JS, "plotly.min.js")}
        start = time.perf_counter()
        build(runs[:full_runs], t / "full", costs=gpu)
        full_s = time.perf_counter() - start
        full_mb = sum(p.stat().st_size for p in (t / "full").rglob("*") if p.is_file()) / 1e6
    n = sum(len(r.points) for r in runs)
    print(f"{n_runs} runs x {points} points ({n} points), made in memory in {made:.1f} s")
    print("| what | figure |")
    print("|---|---|")
    print(f"| explorer data file + page written, {n_runs} runs | {explorer_s:.2f} s |")
    print(f"| explorer data file | {data_mb:.1f} MB |")
    print(f"| explorer site (page, scripts, data, plotly.min.js) | {site_mb:.1f} MB |")
    print(f"| first chart drawn in headless Chromium (navigation start to drawn), median of "
          f"{repeat} | {drawn:.2f} s |")
    print(f"| the view of every point ({HEAVY_VIEW}: WebGL, loads plotly.min.js) | "
          f"{heavy:.2f} s |")
    for name, s in bundles.items():
        print(f"| {name} alone, an empty chart drawn | {s:.2f} s |")
    print(f"| whole `build()` (every page), first {full_runs} runs | {full_s:.2f} s, "
          f"{full_mb:.1f} MB |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--configs", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--explorer-runs", type=int, default=0,
                    help="Measure the explorer at this many synthetic runs instead.")
    ap.add_argument("--points", type=int, default=200, help="Points per synthetic run.")
    ap.add_argument("--full-runs", type=int, default=50,
                    help="How many of the synthetic runs the whole-site build is timed on.")
    args = ap.parse_args()
    if args.explorer_runs:
        explorer_scale(args.explorer_runs, args.points, args.full_runs, args.repeat)
        return
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
