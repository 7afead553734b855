"""Routing matrix rows into buckets, and buckets into run-sweep jobs.

The bucket object keeps InferenceX's shape (``single_node``/``multi_node`` by sequence
family and ``agentic``, four eval buckets, ``changelog_metadata``). Jobs consume
*job outputs*; :func:`job_output_for` maps every bucket, including any sequence family,
to exactly one of :data:`JOB_OUTPUTS`, so no row can be silently dropped.
"""

from __future__ import annotations

import hashlib
import json

from infersweep.matrix.rows import concs as row_concs
from infersweep.matrix.rows import seq_name

EVAL_BUCKETS = ("evals", "agentic_evals", "multinode_evals", "multinode_agentic_evals")

# job output name -> what it holds; run-sweep.yml has one fan-out job per output
JOB_OUTPUTS = {
    "single-node": "single-node fixed-seq-len throughput rows (every sequence family)",
    "single-node-agentic": "single-node agentic-coding throughput rows",
    "multi-node": "multi-node fixed-seq-len throughput rows (every sequence family)",
    "multi-node-agentic": "multi-node agentic-coding throughput rows",
    "evals": "single-node fixed-seq-len eval rows",
    "agentic-evals": "single-node agentic eval rows",
    "multinode-evals": "multi-node fixed-seq-len eval rows",
    "multinode-agentic-evals": "multi-node agentic eval rows",
    "canary-single-node": "the single-node canary point, run before everything else",
    "canary-multi-node": "the multi-node canary point, when no single-node point exists",
}
FINGERPRINT_IGNORES = frozenset({"conc", "exp-name", "config-key", "recipe-fingerprint", "run-eval",
                                 "eval-only", "eval-conc", "eval-all-concs"})


def recipe_fingerprint(row: dict) -> str:
    """SHA-256 of the row's recipe: everything but the points and eval bookkeeping.

    Defined on the emitted (normalised) row, so anyone holding a row can recompute it.
    """
    recipe = {k: v for k, v in row.items() if k not in FINGERPRINT_IGNORES}
    blob = json.dumps(recipe, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(blob.encode()).hexdigest()


def _agentic(row: dict) -> bool:
    return row.get("scenario-type") == "agentic-coding"


def _multi(row: dict) -> bool:
    return row.get("prefill") is not None


def throughput_bucket(row: dict) -> tuple[str, str]:
    """('single_node' | 'multi_node', family) for a throughput row."""
    side = "multi_node" if _multi(row) else "single_node"
    family = "agentic" if _agentic(row) else seq_name(row["isl"], row["osl"])
    return side, family


def eval_bucket(row: dict) -> str:
    if _multi(row):
        return "multinode_agentic_evals" if _agentic(row) else "multinode_evals"
    return "agentic_evals" if _agentic(row) else "evals"


def job_output_for(bucket: str, family: str | None = None) -> str:
    """The run-sweep job output that carries rows of ``bucket`` (and ``family``)."""
    if bucket in EVAL_BUCKETS:
        return bucket.replace("_", "-")
    base = "single-node" if bucket == "single_node" else "multi-node"
    return f"{base}-agentic" if family == "agentic" else base


def build(throughput: list[dict], evals: list[dict], metadata: dict) -> dict:
    single: dict[str, list] = {}
    multi: dict[str, list] = {}
    for row in throughput:
        side, family = throughput_bucket(row)
        (multi if side == "multi_node" else single).setdefault(family, []).append(row)
    out: dict = {"single_node": single, "multi_node": multi}
    for name in EVAL_BUCKETS:
        out[name] = [row for row in evals if eval_bucket(row) == name]
    out["changelog_metadata"] = metadata
    return out


def job_outputs(matrix: dict) -> dict[str, list[dict]]:
    """Flatten the bucket object into one row list per run-sweep job.

    An eval row whose recipe a throughput row of the run also runs is folded into that row
    (see :func:`fold_evals`): the eval runs in the same job, after the throughput points,
    against the engine that is already up. Only evals with no throughput row of their own
    (``evals-only``, ``all-evals``) stay in the eval job outputs.
    """
    out: dict[str, list[dict]] = {name: [] for name in JOB_OUTPUTS}
    for side in ("single_node", "multi_node"):
        for family, rows in matrix.get(side, {}).items():
            out[job_output_for(side, family)].extend(dict(r) for r in rows)
    throughput = [r for name in THROUGHPUT_OUTPUTS for r in out[name]]
    for name in EVAL_BUCKETS:
        out[job_output_for(name)].extend(fold_evals(throughput, matrix.get(name, [])))
    return out


THROUGHPUT_OUTPUTS = ("single-node", "single-node-agentic", "multi-node", "multi-node-agentic")


def eval_conc(row: dict) -> int:
    """The concurrency an eval row evaluates at (its ``eval-conc``, else its highest point)."""
    conc = row_concs(row)
    return int(row.get("eval-conc") or max(conc))


def fold_evals(throughput: list[dict], evals: list[dict]) -> list[dict]:
    """Mark the throughput row that runs each eval's recipe at its concurrency ``run-eval``
    (with that ``eval-conc``); return the eval rows no throughput row runs.

    The match is the recipe fingerprint (everything but points and eval bookkeeping) and
    the eval's concurrency among the row's points, so the eval meets the same server the
    points measured. A row that evaluates every point (``eval-all-concs``) is never folded.
    """
    by_recipe: dict[str, list[dict]] = {}
    for row in throughput:
        by_recipe.setdefault(recipe_fingerprint(row), []).append(row)
    left = []
    for ev in evals:
        conc = eval_conc(ev)
        host = None if ev.get("eval-all-concs") else next(
            (r for r in by_recipe.get(recipe_fingerprint(ev), [])
             if conc in row_concs(r)
             and not r.get("run-eval")), None)
        if host is None:
            left.append(ev)
            continue
        host["run-eval"] = True
        if isinstance(host["conc"], list):
            host["eval-conc"] = conc
    return left


def take_canary(outputs: dict[str, list[dict]]) -> dict | None:
    """Remove and return the cheapest throughput point, to run before everything else.

    The lowest-concurrency point of the single-node rows if there are any; otherwise the
    lowest point of the multi-node row that needs the fewest GPUs. A point of a row of
    several (a multi-node row, or single-node points grouped into one job) is split off its
    row, so that every requested point still runs exactly once.
    """
    single = outputs["single-node"]
    if single:
        return _split_lowest(single, min(range(len(single)),
                                         key=lambda i: min(row_concs(single[i]))))
    multi = outputs["multi-node"]
    if not multi:
        return None

    def gpus(row):
        return sum(row[r]["num-worker"] * row[r]["tp"] * row[r].get("pp", 1)
                   for r in ("prefill", "decode"))

    return _split_lowest(multi, min(range(len(multi)),
                                    key=lambda i: (gpus(multi[i]), min(row_concs(multi[i])))))


def _split_lowest(rows: list[dict], best: int) -> dict:
    """Take the lowest point of ``rows[best]`` out of it (the whole row if it has one)."""
    row = rows[best]
    concs = row_concs(row)
    low = min(concs)
    rest = [c for c in concs if c != low]
    if not rest:
        return rows.pop(best)
    rows[best] = dict(row, conc=rest)
    if row.get("run-eval") and eval_conc(row) == low:  # the eval goes with its point
        rows[best] = {k: v for k, v in rows[best].items() if k != "eval-conc"}
        rows[best]["run-eval"] = False
        return dict(row, conc=[low])
    # the canary is the cheapest check that the recipe serves: the eval stays with the rest
    return {**{k: v for k, v in row.items() if k != "eval-conc"}, "conc": [low],
            "run-eval": False}
