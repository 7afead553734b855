"""Does a matrix row fit a recipe of the srt-slurm checkout? Mode, workers, GPUs, nodes.

The recipe's topology is read as srtctl v1 reads ``resources``: a recipe is disaggregated when
it sets ``prefill_nodes`` or ``decode_nodes``; a worker has ``gpus_per_<role>`` GPUs if set,
else ``<role>_nodes x gpus_per_node / <role>_workers`` (``gpus_per_node`` 4 unless set), and a
decode sharing the prefill nodes (``decode_nodes: 0``) has prefill's. A row's TP is its
GPUs per worker. The settings that restate the topology (``PREFILL_NODES``,
``PREFILL_WORKERS``, ``GPUS_PER_NODE``, ...) must agree with the recipe.
"""

from __future__ import annotations

from collections.abc import Callable

from infersweep.diagnostics import Diagnostic
from infersweep.recipe import rowfit, settings
from infersweep.recipe.topology import as_int

DEFAULT_GPUS_PER_NODE = 4
_HINT = ("point the row's CONFIG_FILE at a recipe with this topology, or change the catalog "
         "entry's search-space")

At = Callable[[tuple, str, str], Diagnostic]  # (pointer, message, hint) -> located diagnostic


def gpus_per_worker(res: dict, role: str) -> int | None:
    gpn = as_int(res.get("gpus_per_node", DEFAULT_GPUS_PER_NODE))
    explicit = res.get(f"gpus_per_{role}")
    if explicit is not None:
        return as_int(explicit)
    nodes, workers = as_int(res.get(f"{role}_nodes")), as_int(res.get(f"{role}_workers"))
    if gpn is None:
        return None
    if nodes and workers:
        return nodes * gpn // workers
    if role == "decode" and nodes == 0 and workers:
        return gpus_per_worker(res, "prefill")
    return gpn


def is_disaggregated(res: dict) -> bool:
    return res.get("prefill_nodes") is not None or res.get("decode_nodes") is not None


def check(row: dict, recipe: dict, at: At, source: str) -> list[Diagnostic]:
    """Every way ``row`` and the recipe's ``resources`` disagree."""
    label = rowfit.row_label(row)
    res = recipe.get("resources")
    if not isinstance(res, dict):
        return [at(("resources",), f"row ({label}) does not fit: the recipe has no "
                   "'resources' mapping", "srtctl needs one")]
    out: list[Diagnostic] = []

    def bad(pointer: tuple, message: str) -> None:
        out.append(at(pointer, f"row ({label}) does not fit: {message}", _HINT))

    disagg = is_disaggregated(res)
    if bool(row.get("disagg")) != disagg:
        kinds = ("disaggregated", "aggregated")
        bad(("resources",), f"the row is {kinds[not row.get('disagg')]}, the recipe "
            f"{kinds[not disagg]}")
        return out
    gpn = as_int(res.get("gpus_per_node", DEFAULT_GPUS_PER_NODE))
    want_gpn, problems = settings.number(row, settings.GPUS_PER_NODE, source)
    out += problems
    if want_gpn is not None and want_gpn != gpn:
        bad(("resources", "gpus_per_node"), f"{settings.GPUS_PER_NODE}={want_gpn}, the "
            f"recipe has {gpn} GPUs per node")
    if not disagg:
        return out  # the row's prefill/decode blocks say nothing about aggregated workers
    for role in settings.ROLES:
        worker = row.get(role) or {}
        workers = as_int(res.get(f"{role}_workers"))
        if worker.get("num-worker") != workers:
            bad(("resources", f"{role}_workers"), f"the row has {worker.get('num-worker')} "
                f"{role} worker(s), the recipe {workers}")
        gpus = gpus_per_worker(res, role)
        if gpus is not None and worker.get("tp") != gpus:
            where = f"gpus_per_{role}" if f"gpus_per_{role}" in res else f"{role}_workers"
            bad(("resources", where), f"the row's {role} workers are TP{worker.get('tp')}, "
                f"the recipe's have {gpus} GPUs")
        for name, key in ((settings.NODES[role], f"{role}_nodes"),
                          (settings.WORKERS[role], f"{role}_workers")):
            wanted, problems = settings.number(row, name, source)
            out += problems
            if wanted is not None and wanted != as_int(res.get(key)):
                bad(("resources", key), f"{name}={wanted}, the recipe has {key}: "
                    f"{res.get(key)}")
    return out
