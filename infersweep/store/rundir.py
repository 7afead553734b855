"""A finished run's folder as the store's input: its points, evals and changelog metadata.

Two layouts are read, both through ``results collect`` and ``eval collect``'s own code:

- a local ``sweep run`` output folder (``<key>/<recipe>/manifest.json`` with ``row.json`` and
  the client results; evals in the jobs' ``eval`` folders);
- a downloaded CI artifact set: ``results_bmk`` (``results/`` job folders, plus
  ``aggregate/results.json`` and ``aggregate/evals.json``) and ``changelog-metadata``
  (``changelog_metadata.json``), each either at the top of the folder or in a folder of its
  own below it. The points are read from ``aggregate/results.json`` and the job folders
  beside it (``results/``) together: a point the two give differently is refused
  (``results-duplicate-point``). The evals are built from the eval folders found below it
  (``aggregate/evals.json`` only when the folder holds none), and judged before they are
  stored (:mod:`infersweep.store.evalgate`).

The ``recipe.yaml`` beside each job's manifest is read too (:mod:`infersweep.store.recipes`).

Agentic-coding results (``*.agentic.json`` in a sweep folder, or the aggregate's ``agentic``
list) are judged again by the agentic gates on their exports wherever they are read; the
store refuses any that does not pass (:mod:`infersweep.store.agentic`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import orjson

from infersweep.diagnostics import Diagnostic, InputError
from infersweep.evals import collect as eval_collect
from infersweep.results import agenticagg
from infersweep.results import collect as results_collect
from infersweep.results.sources import load_json
from infersweep.store import checks, recipes

AGGREGATE = Path("aggregate") / "results.json"
JOBS = "results"  # the job folders of a results_bmk artifact, beside aggregate/
EVALS = "evals.json"
CHANGELOG = "changelog_metadata.json"


@dataclass
class RunDir:
    points: list[dict]
    evals: list[dict]
    changelog: dict | None
    layout: str                   # "artifacts" or "sweep"
    run_id: str | None            # the rows' run id, when they agree on one
    run_ids: list[str]            # every run id the rows and evals name
    attempt: int                  # the newest attempt among the rows and evals
    started: str | None           # the earliest manifest's collection time (local runs)
    warnings: list[str]
    agentic: list[dict] = field(default_factory=list)  # `results collect`'s agentic entries
    eval_folders: list[Path] = field(default_factory=list)  # where the evals were read
    recipes: list[dict] = field(default_factory=list)  # the jobs' recipe.yaml (store.recipes)
    root: Path | None = None


def _err(path, message: str, hint: str = "") -> InputError:
    return InputError(Diagnostic(str(path), 0, 0, message, hint, "store-input"))


def _one_below(root: Path, rel: Path | str, what: str) -> Path | None:
    """``root/rel`` or ``root/*/rel``; an error when several are found."""
    found = sorted({*root.glob(str(rel)), *root.glob(f"*/{rel}"), *root.glob(f"*/*/{rel}")})
    if len(found) > 1:
        raise _err(root, f"{len(found)} {what} files below this folder: "
                   + ", ".join(p.relative_to(root).as_posix() for p in found),
                   "pass the folder of one run")
    return found[0] if found else None


def read_changelog(root: Path) -> dict | None:
    """The run's changelog metadata at or below ``root`` (one document, or None)."""
    found = sorted({*root.glob(CHANGELOG), *root.glob(f"*/{CHANGELOG}"),
                    *root.glob(f"*/*/{CHANGELOG}")})
    docs = []
    for p in found:
        data = load_json(p, "changelog metadata")
        if not isinstance(data, dict):
            raise _err(p, "the changelog metadata is not a JSON object",
                       "restore the changelog-metadata artifact the run uploaded")
        if data not in docs:
            docs.append(data)
    if len(docs) > 1:
        raise _err(root, f"{len(found)} different {CHANGELOG} files below this folder",
                   "pass the folder of one run")
    return docs[0] if docs else None


def _evals_file(path: Path) -> list[dict]:
    data = load_json(path, "eval aggregate")
    rows = data.get("evals") if isinstance(data, dict) else None
    if not isinstance(rows, list) or data.get("collect-version") != eval_collect.COLLECT_VERSION:
        raise _err(path, "not an eval aggregate: expected "
                   f'{{"collect-version": {eval_collect.COLLECT_VERSION}, "evals": [...]}}',
                   "pass the file `infersweep eval collect` wrote")
    return rows


def _relative_sources(evals: list[dict], folder: Path) -> None:
    def rel(text: str) -> str:
        return text.replace(str(folder) + "/", "")
    for e in evals:
        e["source"] = rel(e["source"])
        e["replaced"] = [rel(s) for s in e.get("replaced") or []]


def _eval_key(e: dict) -> tuple:
    return (e.get("config-key"), e.get("recipe-fingerprint"), str(e.get("run-id")),
            e.get("task"))


def _no_eval_without_folder(claimed: list[dict], evals: list[dict], path: Path) -> None:
    """An eval the aggregate names is stored only from its folder, which the eval gate
    judges: one the folder lacks refuses the ingest."""
    have = {_eval_key(e) for e in evals}
    lacking = [e for e in claimed if isinstance(e, dict) and _eval_key(e) not in have]
    if lacking:
        e = lacking[0]
        raise _err(path, f"names {len(lacking)} eval(s) no eval folder below holds, first "
                   f"{e.get('config-key')} {e.get('task')} (recipe "
                   f"{str(e.get('recipe-fingerprint'))[:12]}): an eval is stored only from "
                   "its folder, judged by `eval check`",
                   "pass the whole results_bmk artifact, eval folders included")


def _started(jobs: list[dict]) -> str | None:
    times = []
    for j in jobs:
        try:
            prov = orjson.loads(Path(j["manifest"]).read_bytes())["provenance"]
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if isinstance(prov, dict) and isinstance(prov.get("collected"), str):
            times.append(prov["collected"])
    return min(times) if times else None


def read_run_dir(path) -> RunDir:
    root = Path(path)
    if not root.is_dir():
        raise _err(root, "no such folder" if not root.exists() else "not a folder",
                   "pass a `sweep run` output folder or a run's downloaded artifacts")
    agg_file = _one_below(root, AGGREGATE, "aggregate/results.json")
    if agg_file is not None:
        layout, sources = "artifacts", [agg_file]
        # the job folders beside the aggregate are read too: a row the aggregate or a second
        # job folder changes clashes with its job folder's (results-duplicate-point)
        jobs_dir = agg_file.parent.parent / JOBS
        sources += [jobs_dir] if jobs_dir.is_dir() else []
    else:
        layout, sources = "sweep", [root]
    g = results_collect.gather(sources, allow_incomplete=True, allow_empty=True)
    results_collect.raise_errors(g)
    rows = results_collect.aggregate(g)["rows"]
    evals_file = agg_file.parent / EVALS if agg_file is not None else None
    # the evals come from their folders, which the store's eval gate judges
    eval_folders = eval_collect.find([str(root)])
    evals = eval_collect.collect([str(root)])["evals"] if eval_folders else []
    if agg_file is not None:  # where in the artifact, as its collect job names them
        _relative_sources(evals, agg_file.parent.parent)
    if evals_file is not None and evals_file.is_file():
        _no_eval_without_folder(_evals_file(evals_file), evals, evals_file)
    agentic = agenticagg.entries(g.agentic)
    if not rows and not evals and not agentic:
        raise _err(root, "the run has no benchmark rows, no agentic results and no evals",
                   "stage a run that produced results")
    # every row read, not only the rerun rule's winners: a second run whose points are the
    # same as the first's would be hidden by it
    ids = checks.run_ids(g.rows, evals)  # the rule `results check` applies too
    attempts = [r["attempt"] for r in rows] + [e["attempt"] for e in evals
                                               if isinstance(e.get("attempt"), int)]
    return RunDir(points=rows, evals=evals, changelog=read_changelog(Path(root)), layout=layout,
                  run_id=ids[0] if len(ids) == 1 else None, run_ids=ids,
                  attempt=max(attempts, default=1),
                  started=_started(g.jobs) if layout == "sweep" else None,
                  warnings=list(g.warnings), agentic=agentic, eval_folders=eval_folders,
                  recipes=recipes.of_jobs(g), root=root)


def load_run_dir(path) -> tuple[list[dict], list[dict], dict | None]:
    """(points, evals, changelog metadata) of a run folder; see the module's docstring."""
    d = read_run_dir(path)
    return d.points, d.evals, d.changelog
