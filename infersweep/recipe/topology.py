"""Worker topology of a recipe (``resources`` + ``atom_config``) and whether it fits its nodes."""

from __future__ import annotations

from dataclasses import dataclass

from infersweep.diagnostics import Diagnostic
from infersweep.yamldoc import YamlDoc

ROLES = ("prefill", "decode", "agg")
_CONFIG_KEY = {"prefill": "prefill", "decode": "decode", "agg": "aggregated"}


@dataclass(frozen=True)
class Spelling:
    """Where one backend keeps its engine flags (srt-slurm's ``<engine>_config``, ``atom`` is
    the fork's) and what it calls the settings a row or the simulator cares about."""

    section: str
    limit: str  # admission: requests running at once
    context: str  # context length
    tokens: str  # tokens batched per step


ENGINES = {
    "atom": Spelling("atom_config", "max-num-seqs", "max-model-len", "max-num-batched-tokens"),
    "sglang": Spelling("sglang_config", "max-running-requests", "context-length",
                       "chunked-prefill-size"),
    "vllm": Spelling("vllm_config", "max-num-seqs", "max-model-len", "max-num-batched-tokens"),
    "trtllm": Spelling("trtllm_config", "max_batch_size", "max_seq_len", "max_num_tokens"),
}


def engine_section(backend: dict) -> tuple[str, dict]:
    """(name, mapping) of a backend's per-role engine settings (``atom_config``, ...)."""
    spelling = ENGINES.get(str(backend.get("type", "sglang")), ENGINES["atom"])
    name = spelling.section
    section = backend.get(name)
    return name, section if isinstance(section, dict) else {}


@dataclass(frozen=True)
class Role:
    name: str  # prefill | decode | agg
    nodes: int
    workers: int
    gpus_per_worker: int
    explicit_gpus: bool

    def __str__(self) -> str:
        return (f"{self.workers} {self.name} worker{'s' if self.workers != 1 else ''} x "
                f"{self.gpus_per_worker} GPUs on {self.nodes} node{'s' if self.nodes != 1 else ''}")


def as_int(value) -> int | None:
    """``value`` when it is a whole number (not a bool, not a placeholder string)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def roles(resources: dict) -> list[Role]:
    """The roles a ``resources`` section declares, with srt-slurm's default GPUs per worker."""
    gpn = as_int(resources.get("gpus_per_node")) or 4
    disagg = "prefill_nodes" in resources or "decode_nodes" in resources
    out = []
    for name in (("prefill", "decode") if disagg else ("agg",)):
        nodes = as_int(resources.get(f"{name}_nodes"))
        workers = as_int(resources.get(f"{name}_workers"))
        explicit = as_int(resources.get(f"gpus_per_{name}"))
        if nodes is None or workers is None:
            continue
        gpus = explicit if explicit is not None else (nodes * gpn // workers if workers else 0)
        out.append(Role(name, nodes, workers, gpus, explicit is not None))
    return out


def check(doc: YamlDoc, data: dict) -> list[Diagnostic]:
    """Every worker fits on one node, the workers fit their nodes, every role has its config."""
    res = data.get("resources")
    if not isinstance(res, dict):
        return []
    out: list[Diagnostic] = []
    gpn = as_int(res.get("gpus_per_node"))
    disagg = "prefill_nodes" in res or "decode_nodes" in res
    agg = "agg_nodes" in res or "agg_workers" in res
    if disagg and agg:
        out.append(doc.diag(("resources", "agg_nodes" if "agg_nodes" in res else "agg_workers"),
                            "a recipe is either disaggregated (prefill_*/decode_*) or aggregated "
                            "(agg_*), not both", "remove one set", rule="topology", key=True))
        return out
    wanted = ("prefill", "decode") if disagg else ("agg",)
    for name in wanted:
        for part in ("nodes", "workers"):
            if f"{name}_{part}" not in res:
                out.append(doc.diag(("resources",), f"missing 'resources.{name}_{part}'",
                                    f"add '{name}_{part}:'", rule="topology", key=True))
    backend = data.get("backend") if isinstance(data.get("backend"), dict) else {}
    section, config = engine_section(backend)
    for name in wanted:
        if not config.get(_CONFIG_KEY[name]):
            out.append(doc.diag(("backend", section) if section in backend else ("backend",),
                                f"no '{section}.{_CONFIG_KEY[name]}' for the {name} workers",
                                "give every role its engine settings", rule="topology",
                                key=True))
    out += _front_end(doc, data, backend)
    if gpn is None:
        return out
    by_name = {r.name: r for r in roles(res)}
    for role in by_name.values():
        if role.workers and not role.explicit_gpus and role.nodes * gpn % role.workers:
            out.append(doc.diag(("resources", f"{role.name}_workers"),
                                f"{role.nodes} node(s) of {gpn} GPUs do not split evenly into "
                                f"{role.workers} {role.name} workers",
                                f"set 'gpus_per_{role.name}'", rule="topology"))
            continue
        if role.gpus_per_worker > gpn:
            # SGLang, vLLM and TensorRT-LLM workers may span whole nodes; ATOM's may not
            where = (f"gpus_per_{role.name}" if role.explicit_gpus else f"{role.name}_workers")
            spans = backend.get("type") != "atom" and role.gpus_per_worker % gpn == 0
            if not spans:
                hint = ("ATOM runs each worker on one node; use at most gpus_per_node GPUs per "
                        "worker" if backend.get("type") == "atom" else
                        "a worker larger than a node takes whole nodes: use a multiple of "
                        "gpus_per_node")
                out.append(doc.diag(("resources", where),
                                    f"a {role.name} worker needs {role.gpus_per_worker} GPUs "
                                    f"but a node has {gpn}", hint, rule="topology"))
            elif role.nodes * gpn < role.workers * role.gpus_per_worker:
                out.append(doc.diag(("resources", f"{role.name}_nodes"),
                                    f"{role.workers} {role.name} workers of "
                                    f"{role.gpus_per_worker} GPUs need "
                                    f"{role.workers * role.gpus_per_worker // gpn} nodes of "
                                    f"{gpn} GPUs, not {role.nodes}",
                                    f"raise '{role.name}_nodes'", rule="topology"))
            continue
        shared = role.name == "prefill" and by_name.get("decode") and by_name["decode"].nodes == 0
        need = role.workers
        if shared:
            continue
        if role.name == "decode" and role.nodes == 0:
            pre = by_name.get("prefill")
            if pre and (pre.workers * pre.gpus_per_worker
                        + role.workers * role.gpus_per_worker) > pre.nodes * gpn:
                out.append(doc.diag(("resources", "decode_workers"),
                                    "prefill and decode workers do not fit on the prefill nodes "
                                    f"({pre.nodes} x {gpn} GPUs)", "give decode its own nodes",
                                    rule="topology"))
            continue
        room = (gpn // role.gpus_per_worker) * role.nodes if role.gpus_per_worker else need
        if need > room:
            out.append(doc.diag(("resources", f"{role.name}_workers"),
                                f"{role.workers} {role.name} workers of {role.gpus_per_worker} "
                                f"GPUs do not fit on {role.nodes} node(s) of {gpn} GPUs",
                                f"raise '{role.name}_nodes' or lower the workers",
                                rule="topology"))
    return out


# front ends that need a given backend, and the ones that serve one aggregated worker only
_FRONT_END_BACKEND = {"atomesh": "atom", "atom": "atom", "vllm": "vllm"}
_ONE_WORKER = ("atom", "vllm")


def _front_end(doc: YamlDoc, data: dict, backend: dict) -> list[Diagnostic]:
    """srt-slurm's combination rules of front end, backend and workers."""
    front = data.get("frontend") if isinstance(data.get("frontend"), dict) else {}
    kind, engine = front.get("type"), backend.get("type")
    out = []
    need = _FRONT_END_BACKEND.get(str(kind))
    if need is not None and engine is not None and engine != need:
        out.append(doc.diag(("frontend", "type"), f"front end '{kind}' needs {need} workers, "
                            f"the backend is '{engine}'", "use a front end of this backend "
                            "(sglang, dynamo, ...)", rule="topology"))
    if engine == "atom" and kind not in (None, "atomesh", "atom"):
        out.append(doc.diag(("frontend", "type"), f"ATOM workers are served by atomesh or "
                            f"atom, not '{kind}'", "set frontend.type: atomesh (P/D, "
                            "replicas) or atom (one aggregated worker)", rule="topology"))
    res = data.get("resources") if isinstance(data.get("resources"), dict) else {}
    if kind in _ONE_WORKER:
        agg = [r for r in roles(res) if r.name == "agg"]
        if not agg or agg[0].workers != 1:
            out.append(doc.diag(("frontend", "type"), f"front end '{kind}' serves exactly one "
                                "aggregated worker", "set agg_workers: 1, or use a router "
                                "front end", rule="topology"))
    return out
