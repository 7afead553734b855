"""What a runner label offers a job: GPUs per node and nodes, and where each fact comes from.

GPUs per node come from the label's ``hardware`` record in the runners file; failing that,
from the fleet its runners belong to (``configs/fleets.yaml``, a runner is ``<fleet>_<NN>``);
failing that, from the ``hardware`` record of another label holding the same runners
(InferenceX keeps ``gb200``'s 4 GPUs per node under ``cluster:gb200-nv`` only). Nodes come
from the fleets file only: a runner is the machine a job starts on, not the node count of
the Slurm cluster behind it (InferenceX's ``gb200`` label has 3 runners and entries that
take 18 nodes), so without a fleet the node count is unknown and not checked.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class FleetSize:
    nodes: int
    gpus_per_node: int
    source: str  # the fleets file


@dataclass(frozen=True)
class Capacity:
    gpus_per_node: int | None
    gpus_source: str  # "hardware.<label>.gpus-per-node in <file>", for messages
    nodes: int | None
    nodes_source: str


def fleet_of(runner: str) -> str:
    """``mi355x-amds_03`` -> ``mi355x-amds`` (the runner naming rule)."""
    return runner.split("_", 1)[0]


def label_capacity(label: str, labels: dict, hardware: dict, runners_path: str,
                   fleets: dict[str, FleetSize]) -> Capacity:
    runners = [r for r in labels.get(label) or [] if isinstance(r, str)]
    own_fleets = {fleet_of(r) for r in runners}
    known = [fleets[f] for f in sorted(own_fleets) if f in fleets]
    complete = bool(known) and len(known) == len(own_fleets)
    gpn, gsrc = None, ""
    record = hardware.get(label)
    if isinstance(record, dict) and isinstance(record.get("gpus-per-node"), int):
        gpn, gsrc = record["gpus-per-node"], f"hardware.{label}.gpus-per-node in {runners_path}"
    elif complete and len({f.gpus_per_node for f in known}) == 1:
        names = ", ".join(sorted(own_fleets))
        gpn, gsrc = known[0].gpus_per_node, f"fleet {names} in {known[0].source}"
    else:
        shared = {(other, rec["gpus-per-node"]) for other, rec in hardware.items()
                  if isinstance(rec, dict) and isinstance(rec.get("gpus-per-node"), int)
                  and set(runners) & set(labels.get(other) or [])}
        if len({n for _, n in shared}) == 1:
            other, gpn = sorted(shared)[0]
            gsrc = f"hardware.{other}.gpus-per-node in {runners_path}, the same runners"
    nodes, nsrc = None, ""
    if complete:
        smallest = min(known, key=lambda f: f.nodes)
        nodes = smallest.nodes
        names = ", ".join(sorted(own_fleets))
        nsrc = f"the nodes of fleet {names} in {smallest.source}"
    return Capacity(gpn, gsrc, nodes, nsrc)


def replica_gpus(block: dict) -> int:
    """GPUs one worker (or a single-node server) occupies: tp x pp x pcp-size."""
    return block.get("tp", 1) * block.get("pp", 1) * block.get("pcp-size", 1)


def worker_nodes(block: dict, gpus_per_node: int) -> int:
    """Nodes a worker pool takes: every worker on whole nodes of its own."""
    return block.get("num-worker", 1) * math.ceil(replica_gpus(block) / gpus_per_node)
