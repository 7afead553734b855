"""Human-readable views of matrix rows: the sweep table and `explain`'s cost table."""

from __future__ import annotations

import math
from dataclasses import dataclass

from tabulate import tabulate

from infersweep.matrix.rows import concs, seq_name

DEFAULT_GPUS_PER_NODE = 8


def topology(row: dict) -> str:
    """'TP8 EP1' / 'TP8 DPA' for one node; '2P(TP8 DPA)+1D(TP8 DPA)' for disaggregated."""
    def par(block):
        text = f"TP{block['tp']}"
        if block.get("pp", 1) != 1:
            text += f" PP{block['pp']}"
        if block.get("ep", 1) != 1:
            text += f" EP{block['ep']}"
        if block.get("dp-attn"):
            text += " DPA"
        return text

    if row.get("prefill") is not None:
        p, d = row["prefill"], row["decode"]
        return f"{p['num-worker']}P({par(p)})+{d['num-worker']}D({par(d)})"
    return par(row)


def _seq(row):
    if row.get("scenario-type") == "agentic-coding":
        return "agentic"
    return seq_name(row["isl"], row["osl"])


def matrix_table(pairs) -> str:
    table = []
    for key, row in pairs:
        table.append([
            key, row["runner"], _seq(row), topology(row),
            " ".join(str(c) for c in concs(row)),
            row.get("spec-decoding", "none"),
            "yes" if row.get("run-eval") else "",
        ])
    headers = ["config key", "runner", "seq", "topology", "conc", "spec", "eval"]
    footer = f"\n{len(pairs)} row(s)"
    return tabulate(table, headers=headers, tablefmt="github") + footer


def gpus_and_nodes(row: dict, gpus_per_node: int) -> tuple[int, int]:
    """GPUs and nodes one job of this row occupies."""
    if row.get("prefill") is None:
        gpus = row["tp"] * row.get("pp", 1) * row.get("pcp-size", 1)
        return gpus, math.ceil(gpus / gpus_per_node)
    gpus = nodes = 0
    for role in ("prefill", "decode"):
        w = row[role]
        replica = w["tp"] * w.get("pp", 1) * w.get("pcp-size", 1)
        gpus += w["num-worker"] * replica
        nodes += w["num-worker"] * math.ceil(replica / gpus_per_node)
    return gpus, nodes


@dataclass(frozen=True)
class CostModel:
    """What `explain`'s node-hours estimate assumes: a model load per engine start, and per
    point the client's rounds (warm-ups and measured prompts, each ``conc`` requests at once,
    as the workload writes them) of OSL output tokens at ``tpot_ms`` each."""

    load_minutes: float = 20.0
    tpot_ms: float = 20.0
    rounds: int = 12  # 2 x conc warm-ups + 10 x conc prompts, conc at a time

    def point_hours(self, row: dict) -> float:
        osl = row.get("osl") or 0
        return self.rounds * osl * self.tpot_ms / 1000 / 3600

    def load_hours(self) -> float:
        return self.load_minutes / 60


def explain_data(key: str, catalog, jobs: list[dict], cost: CostModel | None = None) -> dict:
    """What a full sweep of ``key`` runs and costs, as data (``explain --format json``).
    ``jobs`` are the sweep's rows after grouping: one job, one engine start each."""
    cost = cost or CostModel()
    entry = catalog.entries[key]
    hw = catalog.runners.hardware.get(entry["runner"], {})
    per_node = hw.get("gpus-per-node", DEFAULT_GPUS_PER_NODE)
    points = []
    node_jobs = peak = 0
    node_hours = inferencex_node_hours = 0.0
    inferencex_starts = 0
    for job, row in enumerate(jobs, start=1):
        gpus, nodes = gpus_and_nodes(row, per_node)
        node_jobs += nodes
        peak = max(peak, nodes)
        n = len(concs(row))
        node_hours += nodes * (cost.load_hours() + n * cost.point_hours(row))
        # InferenceX starts a single-node engine once per point, a multi-node job once per row
        starts = 1 if row.get("prefill") is not None else n
        inferencex_starts += starts
        inferencex_node_hours += nodes * (starts * cost.load_hours() + n * cost.point_hours(row))
        for c in concs(row):
            evaluated = bool(row.get("run-eval") and (
                row.get("eval-conc") in (None, c) or row.get("eval-all-concs")))
            points.append({"job": job, "seq": _seq(row), "topology": topology(row), "conc": c,
                           "gpus": gpus, "nodes": nodes, "eval": evaluated})
    return {"config-key": key, "model": entry["model"], "precision": entry["precision"],
            "runner": entry["runner"], "framework": entry["framework"],
            "image": entry["image"], "gpus-per-node": per_node, "jobs": len(jobs),
            "engine-starts": len(jobs), "inferencex-engine-starts": inferencex_starts,
            "nodes-total": node_jobs, "nodes-peak": peak,
            "node-hours": round(node_hours, 2),
            "inferencex-node-hours": round(inferencex_node_hours, 2),
            "assumptions": {"load-minutes": cost.load_minutes, "tpot-ms": cost.tpot_ms,
                            "rounds-per-point": cost.rounds},
            "points": points}


def cost_line(starts: int, theirs: int, hours: float, their_hours: float) -> str:
    share = f" ({starts / theirs:.0%})" if theirs else ""
    return (f"{starts} engine start(s){share} where InferenceX's scheme (one per single-node "
            f"point, one per multi-node row) makes {theirs}; about {hours:,.1f} node-hours "
            f"against {their_hours:,.1f}")


def explain_table(key: str, catalog, jobs: list[dict], cost: CostModel | None = None) -> str:
    d = explain_data(key, catalog, jobs, cost)
    table = [[p["job"], p["seq"], p["topology"], p["conc"], p["gpus"], p["nodes"],
              "yes" if p["eval"] else ""] for p in d["points"]]
    head = (f"{key}: {d['model']} {d['precision']} on '{d['runner']}' "
            f"({d['framework']}, image {d['image']})")
    body = tabulate(table, headers=["job", "seq", "topology", "conc", "GPUs", "nodes", "eval"],
                    tablefmt="github")
    a = d["assumptions"]
    summary = (f"{len(d['points'])} point(s) in {d['jobs']} job(s); a full sweep allocates "
               f"{d['nodes-total']} node(s) in total (one job at a time: at most "
               f"{d['nodes-peak']} node(s)); {d['gpus-per-node']} GPUs per node\n"
               + cost_line(d["engine-starts"], d["inferencex-engine-starts"], d["node-hours"],
                           d["inferencex-node-hours"])
               + f" (estimate: {a['load-minutes']:g} min per model load, "
               f"{a['tpot-ms']:g} ms per output token)")
    return f"{head}\n\n{body}\n\n{summary}"
