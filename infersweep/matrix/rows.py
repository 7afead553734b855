"""Building matrix rows from catalog entries; field names and order follow InferenceX."""

from __future__ import annotations

from decimal import ROUND_FLOOR, Decimal

from infersweep.diagnostics import InputError
from infersweep.gitexec import FULL_SHA

SEQ_FAMILIES = {"1k1k": (1024, 1024), "8k1k": (8192, 1024)}
_FAMILY_BY_LENS = {v: k for k, v in SEQ_FAMILIES.items()}
CONTEXT_HEADROOM = 256  # max-model-len = isl + osl + headroom
AGENTIC_DURATION_S = 3600
DRAM_CAP_MIB = 2_861_022  # InferenceX's cap on usable CPU DRAM per node

IDENTITY = ("image", "model", "model-prefix", "precision", "framework")


def engine_revision(row: dict) -> str | None:
    """The engine revision a row pins, which its results must report: the AToMesh router's
    commit (``router: {name: atomesh, version: <40-hex sha>}``). Other routers' versions are
    release names that no result carries, so nothing is expected of them."""
    router = row.get("router") or {}
    version = str(router.get("version") or "")
    return version if router.get("name") == "atomesh" and FULL_SHA.fullmatch(version) else None


def seq_name(isl: int, osl: int) -> str:
    """'1k1k', '8k1k', or '<isl>_<osl>' for any other pair."""
    return _FAMILY_BY_LENS.get((isl, osl), f"{isl}_{osl}")


def concs(row: dict) -> list[int]:
    """A row's concurrencies as a list (single-node rows hold one int, multi-node a list)."""
    c = row["conc"]
    return list(c) if isinstance(c, list) else [c]


def max_model_len(isl: int, osl: int) -> int:
    return isl + osl + CONTEXT_HEADROOM


def worker(block: dict, max_ep: int | None = None) -> dict:
    out = {
        "num-worker": block["num-worker"],
        "tp": block["tp"],
        "pp": block.get("pp", 1),
        "dcp-size": block.get("dcp-size", 1),
        "pcp-size": block.get("pcp-size", 1),
        "ep": _clamp(block["ep"], max_ep),
        "dp-attn": block["dp-attn"],
    }
    if "hardware" in block:
        out["hardware"] = block["hardware"]
    if "additional-settings" in block:
        out["additional-settings"] = list(block["additional-settings"])
    return out


def _clamp(ep, max_ep):
    return min(ep, max_ep) if max_ep is not None and ep is not None else ep


def _components(row: dict, entry: dict, ss: dict, *, kv: bool) -> None:
    for comp in ("router", "kv-p2p-transfer") if kv else ("router",):
        value = ss.get(comp, entry.get(comp))
        if value is not None:
            row[comp] = value


def single_fixed(entry, ss, runner, isl, osl, conc, max_ep) -> dict:
    row = {k: entry[k] for k in IDENTITY}
    row["runner"] = runner
    row |= {
        "isl": isl, "osl": osl, "tp": ss["tp"], "pp": ss.get("pp", 1),
        "dcp-size": ss.get("dcp-size", 1), "pcp-size": ss.get("pcp-size", 1),
        "conc": conc, "max-model-len": max_model_len(isl, osl),
        "ep": _clamp(ss.get("ep"), max_ep) if ss.get("ep") is not None else 1,
        "dp-attn": ss.get("dp-attn") or False,
        "spec-decoding": ss.get("spec-decoding", "none"),
        "exp-name": f"{entry['model-prefix']}_{seq_name(isl, osl)}",
        "disagg": False,
        "run-eval": False,
    }
    _components(row, entry, ss, kv=False)
    return row


def multi_fixed(entry, ss, runner, isl, osl, concs, max_ep) -> dict:
    row = {k: entry[k] for k in IDENTITY}
    row["runner"] = runner
    row |= {
        "isl": isl, "osl": osl, "spec-decoding": ss.get("spec-decoding", "none"),
        "prefill": worker(ss["prefill"], max_ep), "decode": worker(ss["decode"], max_ep),
        "conc": concs, "max-model-len": max_model_len(isl, osl),
        "exp-name": f"{entry['model-prefix']}_{seq_name(isl, osl)}",
        "disagg": entry.get("disagg", False),
        "run-eval": False,
    }
    _components(row, entry, ss, kv=True)
    return row


def _offload(ss: dict) -> tuple[str, dict | None]:
    return ss.get("kv-offloading", "none"), ss.get("kv-offload-backend")


def _offload_suffix(mode: str, backend: dict | None) -> str:
    return f"kv{mode}-{backend['name']}" if backend else f"kv{mode}"


def single_agentic(entry, ss, runner, conc, dram_gb, max_ep) -> dict:
    mode, backend = _offload(ss)
    sd = ss.get("spec-decoding", "none")
    tp = ss["tp"]
    row = {k: entry[k] for k in IDENTITY}
    row["runner"] = runner
    row |= {
        "tp": tp, "pp": ss.get("pp", 1), "dcp-size": ss.get("dcp-size", 1),
        "pcp-size": ss.get("pcp-size", 1),
        "ep": _clamp(ss.get("ep"), max_ep) if ss.get("ep") is not None else 1,
        "dp-attn": ss.get("dp-attn") or False, "spec-decoding": sd, "conc": conc,
        "kv-offloading": mode,
    }
    if backend is not None:
        row["kv-offload-backend"] = backend
    kv = "kvnone" if mode == "none" else _offload_suffix(mode, backend)
    spec = f"_spec-{sd}" if sd != "none" else ""
    row |= {
        "total-cpu-dram-gb": dram_gb, "duration": AGENTIC_DURATION_S,
        "exp-name": f"{entry['model-prefix']}_tp{tp}_conc{conc}_{kv}{spec}",
        "scenario-type": "agentic-coding",
    }
    _components(row, entry, ss, kv=False)
    return row


def _pool_name(tag: str, w: dict) -> str:
    ep = f"ep{w['ep']}" if w["ep"] != 1 else ""
    dpa = "dpa" if w["dp-attn"] else ""
    return f"{tag}{w['num-worker']}x{w['tp']}{ep}{dpa}"


def multi_agentic(entry, ss, runner, concs, dram_gb, max_ep) -> dict:
    mode, backend = _offload(ss)
    row = {k: entry[k] for k in IDENTITY}
    row["runner"] = runner
    prefill, decode = worker(ss["prefill"], max_ep), worker(ss["decode"], max_ep)
    row |= {
        "spec-decoding": ss.get("spec-decoding", "none"),
        "prefill": prefill, "decode": decode, "conc": concs, "kv-offloading": mode,
    }
    if backend is not None:
        row["kv-offload-backend"] = backend
    kv = "" if mode == "none" else "_" + _offload_suffix(mode, backend)
    name = (f"{entry['model-prefix']}_{_pool_name('p', prefill)}_{_pool_name('d', decode)}"
            f"_conc{'x'.join(str(c) for c in concs)}{kv}")
    row |= {
        "total-cpu-dram-gb": dram_gb, "duration": AGENTIC_DURATION_S, "exp-name": name,
        "disagg": entry.get("disagg", False), "scenario-type": "agentic-coding",
    }
    _components(row, entry, ss, kv=True)
    return row


def dram_budget_gb(entry: dict, ss: dict, item: dict, hardware: dict, key: str) -> int:
    """CPU DRAM (GB) given to KV offload for one job; 0 without DRAM offloading."""
    if ss.get("kv-offloading", "none") != "dram":
        return 0
    hw = hardware.get(entry["runner"])
    if hw is None:
        raise InputError(f"{key}: runner '{entry['runner']}' has no hardware record "
                         "(needed for the DRAM budget)")
    per_node = hw["gpus-per-node"]
    if "prefill" in ss:
        p = ss["prefill"]
        replica = p["tp"] * p.get("pp", 1) * p.get("pcp-size", 1)
        if replica > per_node:
            if replica % per_node:
                raise InputError(f"{key}: prefill replica of {replica} GPUs does not fill whole "
                                 f"{per_node}-GPU nodes")
            gpus = per_node
        else:
            if per_node % replica:
                raise InputError(f"{key}: prefill replica of {replica} GPUs does not divide a "
                                 f"{per_node}-GPU node")
            gpus = replica
    else:
        gpus = ss["tp"] * ss.get("pp", 1) * ss.get("pcp-size", 1)
        if gpus > per_node:
            raise InputError(f"{key}: {gpus} GPUs exceed the {per_node} GPUs of one node")
    mib = min(hw["available-cpu-dram-mib"], DRAM_CAP_MIB)
    value = (Decimal(mib) * (1 << 20) * Decimal(str(item["dram-utilization"])) * gpus
             / per_node / Decimal(10**9))
    return int(value.to_integral_value(rounding=ROUND_FLOOR))


# Field order of each row kind once normalised (the shape run-sweep's jobs consume).
_SINGLE_ORDER = ("image", "model", "model-prefix", "precision", "framework", "spec-decoding",
                 "runner", "isl", "osl", "tp", "pp", "dcp-size", "pcp-size", "ep", "dp-attn",
                 "conc", "max-model-len", "exp-name", "disagg", "run-eval", "eval-only",
                 "router")
_MULTI_ORDER = ("image", "model", "model-prefix", "precision", "framework", "spec-decoding",
                "runner", "isl", "osl", "prefill", "decode", "conc", "max-model-len",
                "exp-name", "disagg", "run-eval", "eval-only", "eval-conc", "eval-all-concs",
                "router", "kv-p2p-transfer")
_AGENTIC_ORDER = ("image", "model", "model-prefix", "precision", "framework", "runner", "tp",
                  "pp", "dcp-size", "pcp-size", "ep", "dp-attn", "spec-decoding", "conc",
                  "kv-offloading", "kv-offload-backend", "router", "total-cpu-dram-gb",
                  "duration", "exp-name", "scenario-type", "run-eval", "eval-only")
_MULTI_AGENTIC_ORDER = ("image", "model", "model-prefix", "precision", "framework",
                        "spec-decoding", "runner", "prefill", "decode", "conc", "kv-offloading",
                        "kv-offload-backend", "router", "kv-p2p-transfer", "total-cpu-dram-gb",
                        "duration", "exp-name", "disagg", "scenario-type", "run-eval",
                        "eval-only", "eval-conc")
_WORKER_ORDER = ("num-worker", "tp", "pp", "dcp-size", "pcp-size", "ep", "dp-attn", "hardware",
                 "additional-settings")


def normalise(row: dict) -> dict:
    """The row with every optional field in a fixed order and its defaults written out.

    Fixed-sequence rows gain ``eval-only: false`` (and multi-node rows
    ``eval-all-concs: false``) so a job never has to guess a default; extra fields such as
    ``recipe-fingerprint`` keep their place at the end.
    """
    agentic = row.get("scenario-type") == "agentic-coding"
    multi = row.get("prefill") is not None
    if agentic:
        order = _MULTI_AGENTIC_ORDER if multi else _AGENTIC_ORDER
        defaults: dict = {}
    elif multi:
        order, defaults = _MULTI_ORDER, {"eval-only": False, "eval-all-concs": False}
    else:
        order, defaults = _SINGLE_ORDER, {"eval-only": False}
    merged = {**defaults, **row}
    out = {k: merged[k] for k in order if k in merged}
    for role in ("prefill", "decode"):
        if role in out:
            w = {"additional-settings": [], **out[role]}
            out[role] = {k: w[k] for k in _WORKER_ORDER if k in w}
    out.update((k, v) for k, v in merged.items() if k not in out)
    return out
