"""Wall time and size of `infersweep report build`: on 20 staged runs read from run folders
and from a SQLite store (the default, cheap), and on 1,000 synthetic staged runs x 200 points
(issue 24's scale: build under 10 s, site under 15 MB, first chart under 2 s).

The default: each run has CONFIGS configs of two topologies (4 + 3 concurrencies), processed
by the real results code and saved as a results artifact (aggregate/results.json,
evals.json); the command is timed in a fresh process from those folders (`--from-run`) and
from a SQLite store they were staged into (`--db`).

    python benchmarks/perf/report_build.py [--runs 20] [--configs 10] [--repeat 3]

At scale: synthetic staged runs made in memory (20 configs over four GPUs, two precisions,
ISL/OSL 8k/1k and 1k/1k, 5 concurrencies per series), the whole site built from them as
`report build` builds it (`build()`, every page; reading a store is not counted), its size;
then pages opened in headless Chromium (Selenium and chromedriver, a fresh browser each time,
median of REPEAT): the explorer until its first chart is drawn, then switched to the view of
every point; the newest run's page and a config's page until their charts and tables are
drawn; and plotly.js's basic and whole bundles alone, for comparison. It takes a few minutes.

    python benchmarks/perf/report_build.py --explorer-runs 1000 --points 200 [--repeat 3]

With ``--from-store`` the same synthetic runs are first staged into a SQLite store, and the
command users run, ``infersweep report build --db``, is timed end to end in a fresh process
(reading the store included), beside ``staged_runs()`` alone.

    python benchmarks/perf/report_build.py --explorer-runs 1000 --points 200 --from-store
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
                                 key=f"cfg-{c:02d}")
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
                    intvty = 120.0 / (i + 1) * rng.uniform(0.9, 1.1)
                    pts.append({
                        **blank, "config_key": key, "model": f"model-{c % 2}", "hw": hw, "framework": fw,
                        "precision": prec, "spec_decoding": "none", "disagg": c % 3 == 0,
                        "isl": isl, "osl": osl, "conc": conc, "scale_down": 1,
                        "recipe_name": f"{key}-r", "topology": f"tp{8 >> (c % 3)}",
                        "image": f"registry/{fw}:v{r % 7}", "recipe_fingerprint": f"{c:064x}",
                        "job_id": f"job-{r}-{c}", "run_id": str(40_000_000 + r), "attempt": 1,
                        "successful": True, "tput_per_gpu": tput,
                        "input_tput_per_gpu": tput * 0.8, "output_tput_per_gpu": tput * 0.2,
                        "median_intvty": intvty, "median_tpot": 1 / intvty,
                        "p99_intvty": intvty * rng.uniform(0.6, 0.8),
                        "num_prompts": conc * 10, "completed": conc * 10,
                        "srt_slurm_commit": f"{r % 3:040x}", "engine_revision": f"{fw}-{r % 5}",
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


POINTS_DRAWN = ("const m = performance.getEntriesByName('points-drawn');"
                "return m.length ? m[0].startTime / 1000 : null;")


def points_page_seconds(page: Path) -> float:
    """A run or config page in a fresh browser: navigation start to its 'points-drawn' mark
    (its charts and table drawn from the explorer's data)."""
    with _chromium() as driver:
        driver.get(page.as_uri())
        return _until(driver, POINTS_DRAWN, f"{page.name}'s charts")


def _mb(folder: Path, pattern: str = "*") -> float:
    return sum(p.stat().st_size for p in folder.rglob(pattern) if p.is_file()) / 1e6


def site_scale(n_runs: int, points: int, repeat: int) -> None:
    from infersweep.report import build, config_page_path, costs, explorerdata, run_page_path
    from infersweep.report.site import PLOTLY_BASIC_JS

    start = time.perf_counter()
    runs = synthetic_runs(n_runs, points)
    made = time.perf_counter() - start
    gpu = costs.load(REPO / "configs" / "gpu-costs.yaml")
    with tempfile.TemporaryDirectory() as tmp:
        site = Path(tmp) / "site"
        builds = []
        for _ in range(repeat):
            start = time.perf_counter()
            summary = build(runs, site, costs=gpu)
            builds.append(time.perf_counter() - start)
        sizes = {"site": _mb(site), "data": (site / explorerdata.FILE).stat().st_size / 1e6,
                 "runs": _mb(site / "runs"), "configs": _mb(site / "configs"),
                 "plotly": _mb(site, "plotly*.js")}
        loads = [page_seconds(site / "explorer.html") for _ in range(repeat)]
        newest = max(runs, key=lambda r: r.staged_at)
        run_page = statistics.median(points_page_seconds(site / run_page_path(newest))
                                     for _ in range(repeat))
        key = newest.points[0]["config_key"]
        config_page = statistics.median(points_page_seconds(site / config_page_path(key))
                                        for _ in range(repeat))
        bundles = {b: statistics.median(bundle_seconds(site, b) for _ in range(repeat))
                   for b in (PLOTLY_BASIC_JS, "plotly.min.js")}
    n = sum(len(r.points) for r in runs)
    print(f"{n_runs} runs x {points} points ({n} points), made in memory in {made:.1f} s; "
          f"{len(summary.pages)} pages; median of {repeat}")
    print("| what | figure |")
    print("|---|---|")
    print(f"| whole `report build` (`build()`, every page), {n_runs} runs | "
          f"{statistics.median(builds):.2f} s (each: "
          f"{', '.join(f'{b:.2f}' for b in builds)}) |")
    print(f"| the site | {sizes['site']:.1f} MB |")
    print(f"| `explorer-data.js` | {sizes['data']:.1f} MB |")
    print(f"| the run pages ({n_runs}) | {sizes['runs']:.1f} MB |")
    print(f"| the config pages | {sizes['configs']:.2f} MB |")
    print(f"| plotly.js, both bundles | {sizes['plotly']:.1f} MB |")
    print(f"| explorer: first chart drawn in headless Chromium (navigation start to drawn) | "
          f"{statistics.median(f for f, _ in loads):.2f} s |")
    print(f"| explorer: the view of every point ({HEAVY_VIEW}: WebGL, loads plotly.min.js) | "
          f"{statistics.median(h for _, h in loads):.2f} s |")
    print(f"| the newest run's page: charts and table drawn | {run_page:.2f} s |")
    print(f"| a config's page ({key}): charts and table of its newest runs drawn | "
          f"{config_page:.2f} s |")
    for name, s in bundles.items():
        print(f"| {name} alone, an empty chart drawn | {s:.2f} s |")


def store_scale(n_runs: int, points: int, repeat: int) -> None:
    """``report build --db`` over a SQLite store of ``n_runs`` runs, in a fresh process. The
    store takes only rows the results code wrote, so each run stages the same ``points`` rows
    (jobs of ten concurrencies, twenty per config: tests/unit/store/store_data.py) under its
    own run id."""
    from infersweep.store import RunInfo, load_run_dir, open_store
    from tests.unit.store.store_data import many_points_folder

    with tempfile.TemporaryDirectory() as tmp:
        rows, _, _ = load_run_dir(many_points_folder(Path(tmp) / "run", points))
        url = f"sqlite:///{tmp}/store.db"
        start = time.perf_counter()
        with open_store(url) as store:
            store.migrate()
            for r in range(n_runs):
                run_id = str(40_000_000 + r)
                day = f"2026-{1 + r // 28 % 12:02d}-{1 + r % 28:02d}T00:00:00Z"
                store.ingest(RunInfo(run_id=run_id, attempt=1, source="github",
                                     created_at=day),
                             [{**row, "run_id": run_id} for row in rows], [])
        staged = time.perf_counter() - start
        reads = []
        with open_store(url) as store:
            for _ in range(repeat):
                start = time.perf_counter()
                got = store.staged_runs()
                reads.append(time.perf_counter() - start)
        assert sum(len(r.points) for r in got) == n_runs * points
        build, line = ours(["--db", url], Path(tmp) / "site", repeat)
    print(f"{n_runs} runs x {points} points staged into SQLite in {staged:.0f} s; "
          f"median of {repeat}")
    print(f"report build --db: {line}")
    print("| what | seconds |")
    print("|---|---|")
    print(f"| `staged_runs()`: every run and point read from the store | "
          f"{statistics.median(reads):.2f} |")
    print(f"| `infersweep report build --db` in a fresh process (read and build) | "
          f"{build:.2f} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--configs", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--explorer-runs", type=int, default=0,
                    help="Measure the whole site at this many synthetic runs instead.")
    ap.add_argument("--points", type=int, default=200, help="Points per synthetic run.")
    ap.add_argument("--from-store", action="store_true",
                    help="With --explorer-runs: time `report build --db` over a SQLite store "
                         "of those runs instead.")
    args = ap.parse_args()
    if args.from_store and not args.explorer_runs:
        ap.error("--from-store needs --explorer-runs N (the runs to stage)")
    if args.from_store:
        store_scale(args.explorer_runs, args.points, args.repeat)
        return
    if args.explorer_runs:
        site_scale(args.explorer_runs, args.points, args.repeat)
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
        size = _mb(t / "site")
    print(f"{args.runs} runs x {args.configs} configs, {points} points; median of "
          f"{args.repeat}, fresh processes")
    print(f"report build --from-run: {line}")
    print(f"report build --db: {db_line}")
    print("| what | wall (s) | written |")
    print("|---|---|---|")
    print(f"| `report build --from-run` x {args.runs} (every page) | {mine:.2f} | "
          f"{size:.1f} MB |")
    print(f"| `report build --db` (the same runs staged in a SQLite store) | {from_db:.2f} | "
          f"{size:.1f} MB |")


if __name__ == "__main__":
    main()
