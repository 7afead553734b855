"""Does a matrix row fit the template it names? Topology, parallelism, router, context."""

from __future__ import annotations

import math

from infersweep.diagnostics import Diagnostic
from infersweep.recipe import topology
from infersweep.recipe.topology import as_int
from infersweep.yamldoc import YamlDoc

_NODES_SETTING = {"prefill": "PREFILL_NODES", "decode": "DECODE_NODES"}
# the srt-slurm front end that is each router of the catalog's ``router.name``
ROUTER_FRONTENDS = {"atomesh": "atomesh", "sglang-router": "sglang", "dynamo-router": "dynamo"}
_HINT = ("point the row's CONFIG_FILE at a template with this topology, or change the "
         "catalog entry's search-space")


def settings(worker: dict) -> dict[str, str]:
    """A worker block's ``additional-settings`` as a dict (KEY=VALUE strings)."""
    out = {}
    for item in worker.get("additional-settings") or []:
        key, _, value = str(item).partition("=")
        out[key] = value
    return out


def row_label(row: dict) -> str:
    """A short description of a row for messages: '1P x TP8 + 1D x TP8, conc 4..128'."""
    parts = []
    for role, letter in (("prefill", "P"), ("decode", "D")):
        w = row.get(role)
        if isinstance(w, dict):
            parts.append(f"{w.get('num-worker')}{letter} x TP{w.get('tp')}")
    conc = row.get("conc")
    concs = conc if isinstance(conc, list) else [conc]
    where = " + ".join(parts) or f"TP{row.get('tp')}"
    span = f"{concs[0]}" if len(concs) == 1 else f"{concs[0]}..{concs[-1]}"
    if row.get("scenario-type") == "agentic-coding":
        return f"{row.get('model-prefix', '?')} agentic {where}, conc {span}"
    return f"{row.get('model-prefix', '?')} {row.get('isl')}/{row.get('osl')} {where}, conc {span}"


def check(row: dict, source: str, doc: YamlDoc) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    data = doc.data
    label = row_label(row)

    def row_err(message: str, hint: str = "", rule: str = "row-fit"):
        out.append(Diagnostic(source, 0, 0, f"row ({label}): {message}", hint, rule))

    def tmpl_err(pointer, message, hint=_HINT, key=False):
        out.append(doc.diag(pointer, f"row ({label}) does not fit: {message}", hint,
                            rule="row-fit", key=key))

    if row.get("eval-only") and row.get("scenario-type") == "agentic-coding":
        row_err("an agentic eval-only row asks for a SWE-bench eval, which infersweep does "
                "not run", "run GSM8K evals of fixed-seq-len rows; agentic rows replay "
                "traces for throughput", "row-eval-only")
        return out
    if row.get("scenario-type", "fixed-seq-len") not in ("fixed-seq-len", "agentic-coding"):
        row_err(f"scenario '{row.get('scenario-type')}' has no srt-slurm template",
                "only fixed-seq-len and agentic-coding rows are rendered")
        return out
    res = data.get("resources") or {}
    gpn = res.get("gpus_per_node")
    disagg_tpl = "prefill_nodes" in res or "decode_nodes" in res
    if bool(row.get("disagg")) != disagg_tpl:
        kind = "disaggregated" if row.get("disagg") else "aggregated"
        tmpl_err(("resources",), f"the row is {kind} but the template is not", key=True)
        return out
    if not disagg_tpl:
        _check_aggregated(row, res, data, tmpl_err)
        return out
    by_name = {r.name: r for r in topology.roles(res)}
    config = (data.get("backend") or {}).get("atom_config") or {}
    for role in ("prefill", "decode"):
        w = row.get(role) or {}
        tpl = by_name.get(role)
        if tpl is None:
            continue
        for knob in ("pp", "dcp-size", "pcp-size"):
            if (w.get(knob) or 1) != 1:
                row_err(f"{role} {knob}={w[knob]}: ATOM workers take tensor parallelism only",
                        f"set {knob}: 1", "row-parallelism")
        tp, workers = w.get("tp", 0), w.get("num-worker", 0)
        if isinstance(gpn, int) and tp > gpn:
            row_err(f"a {role} worker of TP{tp} does not fit on one node of {gpn} GPUs",
                    "ATOM runs each worker on one node", "row-fit")
            continue
        want_nodes = settings(w).get(_NODES_SETTING[role])
        try:
            nodes = int(want_nodes) if want_nodes is not None else None
        except ValueError:
            row_err(f"{_NODES_SETTING[role]}={want_nodes} is not a number", rule="row-settings")
            nodes = None
        if nodes is None and isinstance(gpn, int) and gpn:
            nodes = math.ceil(workers * tp / gpn)
        if workers != tpl.workers:
            tmpl_err(("resources", f"{role}_workers"),
                     f"the row has {workers} {role} worker(s), the template {tpl.workers}")
        if tp != tpl.gpus_per_worker:
            where = f"gpus_per_{role}" if tpl.explicit_gpus else f"{role}_workers"
            tmpl_err(("resources", where),
                     f"the row's {role} workers are TP{tp}, the template's have "
                     f"{tpl.gpus_per_worker} GPUs")
        if nodes is not None and nodes != tpl.nodes:
            tmpl_err(("resources", f"{role}_nodes"),
                     f"the row puts {role} on {nodes} node(s), the template on {tpl.nodes}")
        role_cfg = config.get(role) if isinstance(config, dict) else None
        if isinstance(role_cfg, dict):
            for flag, has, message in _atom_flag_mismatches(w, role, role_cfg):
                pointer = ("backend", "atom_config", role) + ((flag,) if has else ())
                tmpl_err(pointer, message, key=has)
            ctx = role_cfg.get("max-model-len")
            need = row.get("max-model-len") or (row.get("isl", 0) + row.get("osl", 0))
            if isinstance(ctx, int) and not isinstance(ctx, bool) and ctx < need:
                tmpl_err(("backend", "atom_config", role, "max-model-len"),
                         f"the {role} context {ctx} is shorter than the row's {need} tokens",
                         "raise max-model-len or use a template for this sequence length")
    router = row.get("router")
    front = (data.get("frontend") or {}).get("type")
    wanted = ROUTER_FRONTENDS.get(router.get("name")) if isinstance(router, dict) else None
    if isinstance(router, dict) and isinstance(front, str) and "{{" not in front and (
            wanted != front if wanted else front == "atomesh"):
        tmpl_err(("frontend", "type"), f"the row's router is '{router.get('name')}', the "
                 f"template's front end is '{front}'", "use a template for that router")
    kv = row.get("kv-p2p-transfer")
    backend = data.get("backend") or {}
    connector = backend.get("connector", "mooncake" if backend.get("type") == "atom" else None)
    if kv is not None and connector is not None and kv != connector:
        tmpl_err(("backend", "connector"), f"the row's KV transfer is '{kv}', the template's "
                 f"connector '{connector}'", "use a template for that transfer engine")
    return out


def _atom_flag_mismatches(w: dict, role: str, role_cfg: dict) -> list[tuple[str, bool, str]]:
    """(flag, set?, message) for each ATOM flag that says otherwise than the row's worker."""
    out = []
    for flag, wanted, what in (("enable-dp-attention", bool(w.get("dp-attn")),
                                "data-parallel attention"),
                               ("enable-expert-parallel", (w.get("ep") or 1) > 1,
                                "expert parallelism")):
        has = role_cfg.get(flag) is True
        if has != wanted:
            out.append((flag, has, f"the row {'asks for' if wanted else 'does not use'} {what} "
                        f"on {role} but the template {'does not set' if wanted else 'sets'} "
                        f"'{flag}'"))
    return out


def check_rendered(row: dict, data: dict, source: str) -> list[Diagnostic]:
    """The rendered recipe runs the row's disaggregated topology: its workers, their GPUs,
    and nodes enough for them (the row's PREFILL_NODES/DECODE_NODES when it sets them). The
    template's literal numbers were checked by :func:`check`; this catches what its
    placeholders and rules computed."""
    res = data.get("resources") or {}
    if not row.get("disagg") or not isinstance(res, dict):
        return []
    out = []
    by_name = {r.name: r for r in topology.roles(res)}
    gpn = as_int(res.get("gpus_per_node")) or 0
    config = (data.get("backend") or {}).get("atom_config") or {}
    for role in ("prefill", "decode"):
        w, got = row.get(role) or {}, by_name.get(role)
        if isinstance(config, dict) and isinstance(config.get(role), dict):
            out += [Diagnostic(source, 0, 0, f"row ({row_label(row)}): the rendered recipe: "
                               f"{message}", "fix the template's row-settings", "row-fit")
                    for _, _, message in _atom_flag_mismatches(w, role, config[role])]
        want = (w.get("num-worker"), w.get("tp"))
        if got is None or (got.workers, got.gpus_per_worker) != want:
            have = "none" if got is None else f"{got.workers} x {got.gpus_per_worker} GPUs"
            out.append(Diagnostic(source, 0, 0, f"row ({row_label(row)}): the rendered recipe "
                                  f"has {role} workers {have}, the row {want[0]} x TP{want[1]}",
                                  "fix the template's resources", "row-fit"))
            continue
        nodes = settings(w).get(_NODES_SETTING[role])
        if (nodes is not None and nodes.isdigit() and int(nodes) != got.nodes) or \
                got.nodes * gpn < got.workers * got.gpus_per_worker:
            out.append(Diagnostic(source, 0, 0, f"row ({row_label(row)}): the rendered recipe "
                                  f"puts {role} on {got.nodes} node(s) of {gpn} GPUs, the row "
                                  f"needs {nodes or 'room for'} {got.workers} x TP"
                                  f"{got.gpus_per_worker}", "fix the template's resources",
                                  "row-fit"))
    return out


def _check_aggregated(row: dict, res: dict, data: dict, tmpl_err) -> None:
    """A single-node row is one engine of TP x PP GPUs on one node; the template's literal
    numbers (placeholders are the row's by construction) must say the same."""
    agg = [r for r in topology.roles(res) if r.name == "agg"]
    gpus = (row.get("tp") or 1) * (row.get("pp") or 1)
    gpn = as_int(res.get("gpus_per_node"))
    if agg and as_int(res.get("agg_workers")) is not None and agg[0].workers != 1:
        tmpl_err(("resources", "agg_workers"), f"a single-node row runs one engine, the "
                 f"template has {agg[0].workers} aggregated workers")
    explicit = as_int(res.get("gpus_per_agg"))
    if explicit is not None and explicit != gpus:
        tmpl_err(("resources", "gpus_per_agg"), f"the row's engine takes {gpus} GPUs "
                 f"(TP{row.get('tp')} x PP{row.get('pp') or 1}), the template's "
                 f"{explicit}", "write gpus_per_agg: '{{ row.tp }}'")
    if gpn is not None and gpus > gpn:
        tmpl_err(("resources", "gpus_per_node"), f"the row's engine takes {gpus} GPUs, a "
                 f"node has {gpn}", "single-node rows run on one node")
    backend = data.get("backend") if isinstance(data.get("backend"), dict) else {}
    section, config = topology.engine_section(backend)
    role_cfg = config.get("aggregated")
    spelling = topology.ENGINES.get(str(backend.get("type")))
    flag = spelling.context if spelling else None
    ctx = as_int(role_cfg.get(flag)) if isinstance(role_cfg, dict) and flag else None
    need = row.get("max-model-len") or (row.get("isl", 0) + row.get("osl", 0))
    if ctx is not None and ctx < need:
        tmpl_err(("backend", section, "aggregated", flag), f"the context {ctx} is shorter "
                 f"than the row's {need} tokens", "write '{{ row.max-model-len }}'")
