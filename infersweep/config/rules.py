"""Cross-field rules a JSON Schema cannot express well, each with its own rule name.

Includes InferenceX's rules and the ones it documents but does not enforce (runner label
must exist, no duplicate concurrency values).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from infersweep.config.capacity import replica_gpus, worker_nodes
from infersweep.diagnostics import Diagnostic, did_you_mean
from infersweep.yamldoc import YamlDoc

if TYPE_CHECKING:
    from infersweep.config.catalog import Runners

SCENARIOS = ("fixed-seq-len", "agentic-coding")
_ENTRY_PARALLEL = ("pp", "dcp-size", "pcp-size")


def search_spaces(entry: dict) -> Iterator[tuple[str, int, int, dict]]:
    """(scenario, item index, search-space index, search-space entry) for the whole entry."""
    for scenario in SCENARIOS:
        for i, item in enumerate(entry.get("scenarios", {}).get(scenario) or []):
            for j, ss in enumerate(item.get("search-space") or []):
                yield scenario, i, j, ss


def check_entry(doc: YamlDoc, key: str, entry: dict, runners: Runners | None) -> list[Diagnostic]:
    out: list[Diagnostic] = []

    def err(pointer, message, hint="", rule="", key_mark=False):
        out.append(doc.diag((key, *pointer), message, hint, rule=rule, key=key_mark))

    multinode = entry["multinode"]
    scen = entry["scenarios"]
    if not any(scen.get(s) for s in SCENARIOS):
        err(("scenarios",), "no scenario has any items",
            "add a 'fixed-seq-len' or 'agentic-coding' list", "empty-scenarios")

    # runner label must exist
    if runners is not None and entry["runner"] not in runners.labels:
        message, hint = unknown_runner(entry["runner"], runners)
        err(("runner",), message, hint, "unknown-runner")

    spaces = list(search_spaces(entry))
    if runners is not None and entry["runner"] in runners.labels:
        _check_capacity(doc, key, entry, spaces, runners, out)
    # router / kv-p2p-transfer live at exactly one scope
    for comp in ("router", "kv-p2p-transfer"):
        inner = [(s, i, j) for s, i, j, ss in spaces if comp in ss]
        if comp in entry and inner:
            s, i, j = inner[0]
            err(("scenarios", s, i, "search-space", j, comp),
                f"'{comp}' is set both at the top level and on a search-space entry",
                "set it in one place only", "component-scope", True)
    if not multinode:
        for s, i, j, ss in spaces:
            if "kv-p2p-transfer" in ss:
                err(("scenarios", s, i, "search-space", j, "kv-p2p-transfer"),
                    "'kv-p2p-transfer' needs 'disagg: true' (a KV-cache transfer runs between "
                    "the prefill and decode workers of a disaggregated multi-node entry); this "
                    "entry has 'multinode: false'",
                    "remove it, or make the entry multi-node and disaggregated",
                    rule="kv-transfer-scope", key_mark=True)
    if entry.get("disagg") and "kv-p2p-transfer" not in entry and (
            not spaces or any("kv-p2p-transfer" not in ss for *_, ss in spaces)):
        err(("disagg",), "'disagg: true' needs a KV transfer engine",
            "set 'kv-p2p-transfer' (e.g. mooncake, nixl) at the top level or on every "
            "search-space entry", "disagg-kv-transfer")

    if scen.get("agentic-coding") and not entry["runner"].startswith("cluster:"):
        err(("runner",), "agentic-coding scenarios need an exact fleet as runner",
            "use a 'cluster:<fleet>' runner label", "agentic-runner")

    for s, i, j, ss in spaces:
        base = ("scenarios", s, i, "search-space", j)
        out.extend(_check_conc(doc, (key, *base), ss))
        _check_parallel(doc, (key, *base), ss, out)
        has_workers = "prefill" in ss or "decode" in ss
        if s == "fixed-seq-len":
            continue
        # agentic search-space forms
        if has_workers:
            if not ("prefill" in ss and "decode" in ss):
                err(base, "multi-node agentic entries need both 'prefill' and 'decode'",
                    rule="agentic-form", key_mark=True)
            if "tp" in ss:
                err((*base, "tp"), "do not mix 'tp' with 'prefill'/'decode' workers",
                    "set parallelism inside the workers", "agentic-form", True)
            for f in _ENTRY_PARALLEL + ("ep", "dp-attn"):
                if f in ss:
                    err((*base, f), f"'{f}' belongs inside the prefill/decode workers here",
                        rule="agentic-form", key_mark=True)
        else:
            if "tp" not in ss:
                err(base, "agentic entry needs 'tp' (single node) or 'prefill'/'decode' workers",
                    rule="agentic-form", key_mark=True)
            if "kv-offloading" not in ss:
                err(base, "single-node agentic entry needs 'kv-offloading' (none or dram)",
                    rule="agentic-form", key_mark=True)
        mode, backend = ss.get("kv-offloading"), ss.get("kv-offload-backend")
        if backend is not None and mode in (None, "none"):
            err((*base, "kv-offload-backend"), "'kv-offload-backend' needs 'kv-offloading: dram'",
                rule="kv-offload", key_mark=True)
        if mode == "dram":
            if backend is None:
                err((*base, "kv-offloading"), "'kv-offloading: dram' needs 'kv-offload-backend'",
                    rule="kv-offload")
            item = scen["agentic-coding"][i]
            if "dram-utilization" not in item:
                err(("scenarios", s, i), "'kv-offloading: dram' needs the item's "
                    "'dram-utilization'", rule="kv-offload", key_mark=True)
            if (runners is not None and entry["runner"] in runners.labels
                    and entry["runner"] not in runners.hardware):  # else: unknown-runner
                err(("runner",), f"runner '{entry['runner']}' has no 'hardware' record in "
                    f"{runners.path}, needed for the DRAM budget", rule="kv-offload")
    return out


def _sku(label: str) -> str:
    return label.removeprefix("cluster:").split("-", 1)[0]


def unknown_runner(label: str, runners: Runners) -> tuple[str, str]:
    """(message, hint) for a runner label the runners file lacks: the labels there, a
    near miss only for the same SKU (never a label of other hardware), and how to add it."""
    names = sorted(runners.labels)
    same_sku = [n for n in names if _sku(n) == _sku(label)]
    message = (f"runner label '{label}' is not defined in {runners.path} "
               f"(labels: {', '.join(names)})")
    add = (f"to add it, put '{label}:' under 'labels:' in {runners.path} with its runner "
           "names, and a 'hardware' record with its gpus-per-node")
    close = did_you_mean(label, same_sku)
    return message, f"{close} or {add}" if close else add


def _check_capacity(doc: YamlDoc, key: str, entry: dict, spaces: list, runners: Runners,
                    out: list[Diagnostic]) -> None:
    """Every search-space entry fits what the runner label offers: a single-node server its
    GPUs per node, a multi-node topology the nodes of the label's fleet."""
    label = entry["runner"]
    cap = runners.capacity(label)
    for s, i, j, ss in spaces:
        base = (key, "scenarios", s, i, "search-space", j)
        workers = [ss.get(r) for r in ("prefill", "decode")]
        if not any(isinstance(w, dict) for w in workers):
            gpus = replica_gpus(ss)
            if cap.gpus_per_node is not None and "tp" in ss and gpus > cap.gpus_per_node:
                shape = " x ".join(f"{f} {ss[f]}" for f in ("tp", "pp", "pcp-size") if f in ss)
                out.append(doc.diag(
                    (*base, "tp"), f"{shape} needs {gpus} GPUs on one node, but a node of "
                    f"runner label '{label}' has {cap.gpus_per_node} ({cap.gpus_source})",
                    f"make tp x pp x pcp-size at most {cap.gpus_per_node}, or make the entry "
                    "multi-node with prefill/decode workers", rule="node-capacity"))
            continue
        if cap.gpus_per_node is None or cap.nodes is None:
            continue
        if not all(isinstance(w, dict) for w in workers):
            continue
        per_role = [(r, w.get("num-worker", 1), worker_nodes(w, cap.gpus_per_node))
                    for r, w in zip(("prefill", "decode"), workers, strict=True)]
        need = sum(n for *_, n in per_role)
        if need > cap.nodes:
            parts = " + ".join(f"{n} node(s) for {count} {r} worker(s)"
                               for r, count, n in per_role if count)
            out.append(doc.diag(
                base, f"this topology needs {need} nodes ({parts}, "
                f"{cap.gpus_per_node} GPUs per node), but runner label '{label}' reaches "
                f"{cap.nodes} ({cap.nodes_source})",
                "use fewer or smaller workers, or a runner label whose fleet has more nodes",
                rule="fleet-capacity", key=True))


def _check_conc(doc: YamlDoc, base: tuple, ss: dict) -> list[Diagnostic]:
    has_range = "conc-start" in ss or "conc-end" in ss
    has_list = "conc-list" in ss
    if has_range and has_list:
        return [doc.diag((*base, "conc-list"), "give either conc-start/conc-end or conc-list, "
                         "not both", rule="conc", key=True)]
    if not has_range and not has_list:
        return [doc.diag(base, "no concurrency given",
                         "add 'conc-start' and 'conc-end', or 'conc-list'", rule="conc", key=True)]
    if has_range:
        if "conc-start" not in ss or "conc-end" not in ss:
            missing = "conc-end" if "conc-start" in ss else "conc-start"
            return [doc.diag(base, f"'{missing}' is missing", "a range needs both ends",
                             rule="conc", key=True)]
        if ss["conc-start"] > ss["conc-end"]:
            return [doc.diag((*base, "conc-start"), f"conc-start {ss['conc-start']} is greater "
                             f"than conc-end {ss['conc-end']}", "swap them", rule="conc")]
        return []
    seen: set[int] = set()
    for n, value in enumerate(ss["conc-list"]):
        if value in seen:
            return [doc.diag((*base, "conc-list", n), f"concurrency {value} appears twice in "
                             "conc-list", "remove the duplicate", rule="conc")]
        seen.add(value)
    return []


def _check_parallel(doc: YamlDoc, base: tuple, ss: dict, out: list[Diagnostic]) -> None:
    def dcp(where: tuple, block: dict):
        tp, d = block.get("tp"), block.get("dcp-size", 1)
        if isinstance(tp, int) and isinstance(d, int) and d > 0 and tp % d:
            out.append(doc.diag((*where, "dcp-size"), f"dcp-size {d} does not divide tp {tp}",
                                "dcp-size must be a divisor of tp", rule="dcp-size"))

    dcp(base, ss)
    for role in ("prefill", "decode"):
        if isinstance(ss.get(role), dict):
            dcp((*base, role), ss[role])
    p, d = ss.get("prefill"), ss.get("decode")
    if isinstance(p, dict) and p.get("num-worker") == 0:
        out.append(doc.diag((*base, "prefill", "num-worker"), "the prefill pool needs at least "
                            "one worker", "only 'decode: num-worker: 0' (aggregated) may be 0",
                            rule="num-worker"))
    if isinstance(p, dict) and isinstance(d, dict) and (("hardware" in p) != ("hardware" in d)):
        out.append(doc.diag((*base, "prefill" if "hardware" in p else "decode", "hardware"),
                            "'hardware' is set on one worker pool only",
                            "set it on both prefill and decode, or on neither", rule="hardware",
                            key=True))
