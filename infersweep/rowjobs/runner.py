"""Run matrix rows one after another on an executor and collect a manifest for each.

The core of ``infersweep sweep run`` (every row of a selection) and ``infersweep launch`` (one
row in a CI job).

Every row is rendered (and scaled down) before anything starts, so a bad row stops the sweep
before the first job. A row with a previous manifest runs only the points that manifest does
not hold; the points it does hold are copied over and keep the attempt that produced them.
A signal cancels the running job, collects it, and writes a manifest for every row not run,
so that each expected point is accounted for. An eval-only row (``evals-only``, ``all-evals``)
has no points: its job runs the GSM8K eval alone, on every attempt (an eval is never carried
over), and its manifest is complete only with the eval present.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

from infersweep.diagnostics import Diagnostic, InputError
from infersweep.matrix.rows import concs as row_concs
from infersweep.matrix.rows import engine_revision
from infersweep.pins.lock import LOCK_PATH, load_lock
from infersweep.progress import StatusLines
from infersweep.recipe.render import Rendered, render_row
from infersweep.rowjobs import manifest as manifests
from infersweep.rowjobs.executor import Executor, Job, JobState, Provenance
from infersweep.rowjobs.scale import scale

EVAL_DIR = "eval"  # a row's eval output, beside its point results
NOT_RUN_RESULTS = Path("logs", "fixed-seq")  # result dir named by a manifest of a row not run


class Interrupted(Exception):
    def __init__(self, signum: int):
        self.signum = signum
        super().__init__(signal.Signals(signum).name)


@dataclass
class Planned:
    key: str
    row: dict  # the row as the matrix gave it
    workdir: Path
    rendered: Rendered  # for the points still to run (None-equivalent: run is empty)
    expected: list[int]  # every concurrency of the row
    run: list[int]  # the ones this attempt runs
    previous: dict | None = None
    previous_path: Path | None = None
    carried: list[dict] = field(default_factory=list)

    @property
    def eval_only(self) -> bool:
        return bool(self.row.get("eval-only"))

    @property
    def has_work(self) -> bool:
        """Points to run, or the eval of an eval-only row."""
        return bool(self.run) or self.eval_only


def run_context(previous: list[dict]) -> tuple[str, int]:
    """Run id and attempt: GitHub's when set, else the previous attempt's id and next number,
    else a fresh local id."""
    run_id = os.environ.get("GITHUB_RUN_ID")
    attempt = os.environ.get("GITHUB_RUN_ATTEMPT")
    if previous:
        run_id = run_id or previous[0]["provenance"]["run-id"]
        last = max(m["provenance"]["attempt"] for m in previous)
        attempt = attempt or str(last + 1)
    if not run_id:
        run_id = time.strftime("local-%Y%m%dT%H%M%SZ", time.gmtime()) + f"-{secrets.token_hex(2)}"
    try:
        number = int(attempt) if attempt else 1
    except ValueError:
        number = 1
    return run_id, max(1, number)


def load_previous(paths) -> list[tuple[Path, dict]]:
    """Manifests from files, or every ``manifest.json`` below a folder (an earlier output)."""
    found = []
    for raw in paths:
        path = Path(raw)
        files = sorted(path.rglob(manifests.FILENAME)) if path.is_dir() else [path]
        if path.is_dir() and not files:
            raise InputError(Diagnostic(str(path), 0, 0, "no manifest.json below this folder",
                                        "pass an earlier `sweep run` output folder or a "
                                        "manifest file", "manifest"))
        found += [(f, manifests.load(f)) for f in files]
    return found


def eval_entry(folder: Path, manifest_dir: Path) -> dict:
    """What the manifest says of a row's eval: where it is and, when it finished, its scores."""
    entry = {"dir": os.path.relpath(folder, manifest_dir), "status": "missing"}
    try:
        data = json.loads((folder / "eval.json").read_text())
        scores = {f: float(v["exact_match"]) for f, v in data["scores"].items()}
        requests = data.get("requests") or {}
        entry.update(status="present", scores=scores, **{"n-samples": int(data["n-samples"])},
                     retries=requests.get("retries"), failed=requests.get("failed"))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass
    return entry


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "row"


class RowRunner:
    def __init__(self, pairs: list[tuple[str, dict]], *, repo: Path, executor: Executor,
                 out_dir: Path, scale_down: float = 1.0, previous=(), timeout: float | None = None,
                 display: StatusLines | None = None, label: str = "sweep"):
        self.label = label  # who stops a job, in its manifest's reason ("sweep", "launcher")
        self.repo = Path(repo)
        self.executor = executor
        self.out_dir = Path(out_dir)
        self.scale_down = scale_down
        self.timeout = timeout
        self.display = display or StatusLines()
        self.previous = list(previous)
        lock = load_lock(self.repo / LOCK_PATH)
        self.srt_slurm_commit = lock.srt_slurm.commit if "srt-slurm" in lock.pins else None
        self.plans = self._plan(pairs)
        # only a previous manifest that matched a row lends its run id and attempt
        self.run_id, self.attempt = run_context([p.previous for p in self.plans
                                                 if p.previous is not None])

    # planning -----------------------------------------------------------------------------
    def _render(self, row: dict, workdir: Path, source: str) -> Rendered:
        opts = self.executor.render_options(workdir)
        rendered = render_row(row, self.repo, source=source, client=opts.client,
                              result_dir=opts.result_dir)
        return scale(rendered, self.scale_down, client=opts.client, result_dir=opts.result_dir)

    def _plan(self, pairs) -> list[Planned]:
        plans, used = [], set()
        by_identity = {manifests.identity(m): (p, m) for p, m in self.previous}
        matched = set()
        for key, row in pairs:
            concs = [] if row.get("eval-only") else row_concs(row)  # an eval-only row: none
            # render once for the name and the scaled lengths, again for the points to run
            probe = self._render(row, self.out_dir / "_", key)
            base = self.out_dir / _slug(key) / _slug(probe.name)
            workdir, n = base, 2
            while workdir in used:
                workdir, n = base.with_name(f"{base.name}-{n}"), n + 1
            used.add(workdir)
            # a manifest without points (an eval-only job's) names no lengths
            lengths = ((probe.workload.isl, probe.workload.osl) if concs else (None, None))
            ident = (key, probe.name, self.scale_down, *lengths)
            prev_path, prev = by_identity.get(ident, (None, None))
            carried = []
            run = list(concs)
            if prev is not None:
                matched.add(ident)
                carried = self._carry(prev, prev_path, concs)
                have = {e["conc"] for e in carried}
                run = [c for c in concs if c not in have]
            rendered = self._render({**row, "conc": run or concs} if concs else row, workdir,
                                    key)
            plans.append(Planned(key, row, workdir, rendered, list(concs), run, prev, prev_path,
                                 carried))
        for ident, (path, m) in by_identity.items():
            if ident not in matched:
                self.display.line(f"warning: {path}: matches no selected row "
                                  f"({m['provenance']['config-key']} {m['name']}, scale-down "
                                  f"{m['scale-down']:g}); ignored")
        return plans

    def _carry(self, prev: dict, prev_path: Path, concs: list[int]) -> list[dict]:
        """The previous attempt's present points whose files still exist."""
        out = []
        for p in prev["points"]:
            if p["status"] != manifests.PRESENT or p["conc"] not in concs:
                continue
            src = Path(p["file"])
            src = src if src.is_absolute() else prev_path.parent / src
            if src.is_file():
                out.append({**p, "file": str(src)})
        return out

    # running ------------------------------------------------------------------------------
    def _provenance(self, plan: Planned) -> Provenance:
        return Provenance(config_key=plan.key, image=plan.row.get("image"),
                          srt_slurm_commit=self.srt_slurm_commit,
                          atom_revision=engine_revision(plan.row), run_id=self.run_id,
                          attempt=self.attempt)

    def _finish(self, plan: Planned, manifest: dict) -> dict:
        """Copy the carried points' files in, add them, write the manifest."""
        result_dir = plan.workdir / manifest["result-dir"]
        carried = []
        for p in plan.carried:
            src = Path(p["file"])
            dst = result_dir / src.name
            result_dir.mkdir(parents=True, exist_ok=True)
            if src.resolve() != dst.resolve():
                shutil.copyfile(src, dst)
                records = src.with_suffix(".records.jsonl")
                if records.is_file():
                    shutil.copyfile(records, dst.with_suffix(".records.jsonl"))
            carried.append({**p, "file": os.path.relpath(dst, plan.workdir)})
        if carried:
            manifest["points"] = sorted(manifest["points"] + carried, key=lambda e: e["conc"])
        if plan.row.get("run-eval") or plan.eval_only:
            manifest["eval"] = eval_entry(result_dir / EVAL_DIR, plan.workdir)
        manifest["complete"] = not manifests.problems(manifest)
        manifests.write(plan.workdir / manifests.FILENAME, manifest)
        return manifest

    def _not_run(self, plan: Planned, state: JobState, reason: str, job_id=None) -> dict:
        r = plan.rendered
        points = [p for p in r.points if p.conc in plan.run]
        result_dir = plan.workdir / NOT_RUN_RESULTS
        return manifests.collect(
            recipe=r.recipe, points=points, isl=r.workload.isl, osl=r.workload.osl,
            result_dir=result_dir, manifest_dir=plan.workdir,
            provenance=self._provenance(plan), executor=self.executor.name, job_id=job_id,
            job_state=state, job_reason=reason, scale_down=self.scale_down)

    def _watch(self, index: int, plan: Planned, job: Job) -> JobState:
        deadline = None if self.timeout is None else time.monotonic() + self.timeout
        opts_dir = Path(self.executor.render_options(plan.workdir).result_dir)
        points = [p for p in plan.rendered.points if p.conc in plan.run]
        seen: set[int] = set()
        started = time.monotonic()
        head = f"[{index}/{len(self.plans)}] {plan.key} {plan.rendered.name}"
        while True:
            state = job.wait(time.monotonic() + 0.5)
            for p in points:
                if p.conc not in seen and (opts_dir / p.result_file).is_file():
                    seen.add(p.conc)
                    self.display.line(f"{head}: c={p.conc} written "
                                      f"({len(seen)}/{len(points)}, "
                                      f"{time.monotonic() - started:.0f} s)")
            if state.terminal:
                return state
            if deadline is not None and time.monotonic() >= deadline:
                job.cancel(f"the {self.label}'s --timeout of {self.timeout:g} s expired")
                return job.state()
            running = next((p.conc for p in points if p.conc not in seen), None)
            progress = "the eval" if plan.eval_only else f"{len(seen)}/{len(points)} points"
            self.display.status(f"{head}: {state}, {progress}"
                                + (f", c={running} running" if running else "")
                                + f", {time.monotonic() - started:.0f} s")

    def _run_one(self, index: int, plan: Planned) -> dict:
        head = f"[{index}/{len(self.plans)}] {plan.key} {plan.rendered.name}"
        if not plan.has_work:
            self.display.line(f"{head}: every point present in {plan.previous_path}; "
                              "nothing to run")
            prev = plan.previous["provenance"]
            m = self._not_run(plan, JobState.COMPLETED, None, job_id=prev["job-id"])
            return self._finish(plan, m)
        carried = f" ({len(plan.carried)} carried over)" if plan.carried else ""
        work = (f"the eval alone (eval-only row, c={plan.rendered.workload.eval_conc})"
                if plan.eval_only else
                f"{len(plan.run)} point(s) {' '.join(map(str, plan.run))}{carried}")
        self.display.line(f"{head}: {work} on {self.executor.name}")
        job = self.executor.submit(plan.rendered, plan.row, plan.workdir,
                                   provenance=self._provenance(plan))
        try:
            state = self._watch(index, plan, job)
        except Interrupted as exc:
            job.cancel(f"the {self.label} received {exc}")
            exc.manifest = self._finish(plan, job.collect())
            raise
        except BaseException:
            job.cancel(f"the {self.label} stopped")
            raise
        manifest = self._finish(plan, job.collect())
        done = (f"eval {manifest['eval']['status']}" if plan.eval_only else
                f"{sum(p['status'] == manifests.PRESENT for p in manifest['points'])}"
                f"/{len(manifest['points'])} points present")
        self.display.line(f"{head}: job {job.job_id} {state}, {done}")
        return manifest

    def run(self) -> tuple[list[dict], int | None]:
        """Every row's manifest, and the signal that stopped the sweep (None if none did)."""
        done: list[dict] = []
        stopped: int | None = None

        def on_signal(signum, frame):
            for sig in (signal.SIGTERM, signal.SIGINT):
                signal.signal(sig, signal.SIG_IGN)
            raise Interrupted(signum)

        old = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
        try:
            for i, plan in enumerate(self.plans, 1):
                try:
                    done.append(self._run_one(i, plan))
                except Interrupted as exc:
                    stopped = exc.signum
                    for sig in (signal.SIGTERM, signal.SIGINT):
                        signal.signal(sig, signal.SIG_IGN)
                    name = signal.Signals(stopped).name
                    if getattr(exc, "manifest", None) is not None:
                        done.append(exc.manifest)
                    else:
                        done.append(self._finish(plan, self._not_run(
                            plan, JobState.CANCELLED,
                            f"the {self.label} received {name} before this row started")))
                    for rest in self.plans[len(done):]:
                        done.append(self._finish(rest, self._not_run(
                            rest, JobState.CANCELLED, f"not run: the {self.label} received {name} first")))
                    break
        finally:
            for sig, handler in old.items():
                signal.signal(sig, handler)
        return done, stopped
