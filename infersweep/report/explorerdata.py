"""The explorer's data: every staged run's points in one compact file the page reads once.

Points are column arrays, not an object per point. What a series of points shares (the run,
config, recipe, hardware, framework, precision, ISL/OSL, image, recipe fingerprint, job) is
stored once per series, each text column as a list of distinct values and a code per series;
a point holds its series' number, its concurrency and its metrics, numbers kept to
``DIGITS`` significant digits. The file is a script (``explorer-data.js``) that sets one
global, because a page opened from ``file://`` may not fetch a JSON file beside it.
"""

from __future__ import annotations

import json

from infersweep.report import pareto
from infersweep.report.costs import GpuCosts
from infersweep.report.views import run_order
from infersweep.results.agenticagg import offload_mode
from infersweep.store import agentic as agenticstore
from infersweep.store.model import StagedRun

FILE = "explorer-data.js"
GLOBAL = "INFERSWEEP_EXPLORER_DATA"
VERSION = 1
DIGITS = 4
SEED_SEQ = "8k/1k"
# series columns (text, dictionary-encoded) and what a point row gives for each
SERIES = ("config", "model", "hw", "cost_hw", "vendor", "framework", "precision", "spec",
          "disagg", "seq", "recipe", "topology", "image", "fingerprint", "job", "kind")
# point columns: name -> the results row's field (latencies in seconds, as rows keep them)
METRICS = {"tput": "tput_per_gpu", "tput_in": "input_tput_per_gpu",
           "tput_out": "output_tput_per_gpu", "intvty": "median_intvty",
           "e2el": "median_e2el", "ttft50": "median_ttft", "ttft90": "p90_ttft",
           "ttft99": "p99_ttft", "jpt_measured": "joules_per_total_token"}


def seq_label(isl, osl, scale_down=1) -> str:
    """``8k/1k`` for 8192/1024 (``1000/1000`` stays as it is); a scaled-down run says so."""
    def one(n) -> str:
        n = int(n)
        return f"{n // 1024}k" if n % 1024 == 0 and n >= 1024 else str(n)
    label = f"{one(isl)}/{one(osl)}"
    s = pareto.number(scale_down) or 1
    return label if s == 1 else f"{label} scaled down {s:g}x"


def _text(v) -> str:
    return "" if v is None else str(v)


def _flag(v) -> str:
    if v is None:
        return ""
    return "yes" if v in (True, 1, "true", "True", "yes") else "no"


def _spec(v) -> str:
    return "none" if v in (None, "", "none", False) else str(v)


class _Columns:
    """Series and point columns as they are appended; text columns dictionary-encoded."""

    def __init__(self):
        self.codes = {c: [] for c in SERIES}
        self.values = {c: {} for c in SERIES}
        self.series_run: list[int] = []
        self.series_index: dict[tuple, int] = {}
        self.points = {"series": [], "conc": [], **{m: [] for m in METRICS}}

    def series(self, run: int, attrs: dict) -> int:
        key = (run, *(attrs[c] for c in SERIES))
        n = self.series_index.get(key)
        if n is None:
            n = self.series_index[key] = len(self.series_run)
            self.series_run.append(run)
            for c in SERIES:
                self.codes[c].append(self.values[c].setdefault(attrs[c], len(self.values[c])))
        return n

    def point(self, series: int, conc, metrics: dict) -> None:
        self.points["series"].append(series)
        self.points["conc"].append(int(conc) if conc is not None else None)
        for m in METRICS:
            self.points[m].append(pareto.number(metrics.get(m)))


def _attrs(p: dict, costs: GpuCosts | None, kind: str, seq: str, topology: str) -> dict:
    hw = _text(p.get("hw"))
    cost_hw = costs.entry_name(hw) if costs else None
    vendor = costs.hardware[cost_hw].vendor if cost_hw else ""
    return {"config": _text(p.get("config_key")), "model": _text(p.get("model")), "hw": hw,
            "cost_hw": cost_hw or "", "vendor": vendor, "framework": _text(p.get("framework")),
            "precision": _text(p.get("precision")), "spec": _spec(p.get("spec_decoding")),
            "disagg": _flag(p.get("disagg")), "seq": seq, "recipe": _text(p.get("recipe_name")),
            "topology": topology, "image": _text(p.get("image")),
            "fingerprint": _text(p.get("recipe_fingerprint")), "job": _text(p.get("job_id")),
            "kind": kind}


def _fixed(cols: _Columns, run: int, p: dict, costs: GpuCosts | None) -> None:
    if not p.get("successful", True) or p.get("isl") is None or p.get("osl") is None:
        return
    seq = seq_label(p["isl"], p["osl"], p.get("scale_down") or 1)
    attrs = _attrs(p, costs, "fixed-seq-len", seq, _text(p.get("topology") or p.get("recipe_name")))
    metrics = {m: p.get(f) for m, f in METRICS.items()}
    if p.get("power_valid") is False:
        metrics["jpt_measured"] = None  # a measurement the row says is not valid
    cols.point(cols.series(run, attrs), p.get("conc"), metrics)


def _agentic(cols: _Columns, run: int, entry: dict, costs: GpuCosts | None) -> None:
    r = entry["result"]
    values = agenticstore.columns(entry)
    p = {**r, "config_key": entry["config_key"], "image": values.get("image"),
         "recipe_fingerprint": values.get("recipe_fingerprint"), "recipe_name": entry["name"]}
    attrs = _attrs(p, costs, "agentic", "agentic", f"KV offload {offload_mode(r)}")
    metrics = {m: values.get(f) for m, f in METRICS.items() if m != "jpt_measured"}
    cols.point(cols.series(run, attrs), values.get("conc"), metrics)


def _date(run: StagedRun) -> str:
    return (run.created_at or run.staged_at or "")[:10]


def _defaults(cols: _Columns) -> dict:
    """The newcomer's view: the model with the most configs, at 8k/1k when it has it (else
    its sequence with the most points), the newest run of each config, frontiers only."""
    names = {c: list(cols.values[c]) for c in ("model", "config", "seq")}
    configs: dict[str, set] = {}
    for s in range(len(cols.series_run)):
        configs.setdefault(names["model"][cols.codes["model"][s]], set()).add(
            cols.codes["config"][s])
    if not configs:
        return {"model": "", "seq": ""}
    model = min(configs, key=lambda m: (-len(configs[m]), m))
    counts: dict[str, int] = {}
    for s in cols.points["series"]:
        if names["model"][cols.codes["model"][s]] == model:
            seq = names["seq"][cols.codes["seq"][s]]
            counts[seq] = counts.get(seq, 0) + 1
    seq = SEED_SEQ if SEED_SEQ in counts else min(counts, key=lambda q: (-counts[q], q))
    return {"model": model, "seq": seq}


def arrange(runs: list[StagedRun], costs: GpuCosts | None) -> dict:
    """The data object: runs (oldest first), series, points, costs and the default view."""
    ordered = sorted(runs, key=run_order)
    cols = _Columns()
    for i, run in enumerate(ordered):
        for p in run.points:
            _fixed(cols, i, p, costs)
        for e in run.agentic:
            _agentic(cols, i, e, costs)
    series = {c: {"values": list(cols.values[c]), "codes": cols.codes[c]} for c in SERIES}
    series["run"] = cols.series_run
    return {
        "version": VERSION,
        "runs": {"id": [str(r.run_id) for r in ordered], "attempt": [r.attempt for r in ordered],
                 "label": [r.label for r in ordered], "date": [_date(r) for r in ordered],
                 "url": [r.url or "" for r in ordered]},
        "series": series, "points": cols.points,
        "costs": costs.as_data() if costs else {"tiers": [], "hardware": {}},
        "defaults": _defaults(cols),
    }


def _number(v) -> str:
    if v is None:
        return "null"
    if isinstance(v, int):
        return str(v)
    text = format(v, f".{DIGITS}g")
    return text[:-2] if text.endswith(".0") else text


def script(data: dict) -> str:
    """``data`` as the script the page loads: numbers short, text JSON-escaped (``<``, ``>``
    and ``&`` too, so no value can close the script)."""
    points = data["points"]
    cols = ",".join(f'"{k}":[{",".join(map(_number, v))}]' for k, v in points.items())
    rest = {k: v for k, v in data.items() if k != "points"}
    body = json.dumps(rest, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    body = body[:-1] + f',"points":{{{cols}}}}}'
    body = body.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return f"window.{GLOBAL} = {body};\n"


def load_script(text: str) -> dict:
    """The data object back from :func:`script`'s text (for tests and tools)."""
    prefix = f"window.{GLOBAL} = "
    assert text.startswith(prefix), "not an explorer data file"
    return json.loads(text[len(prefix):].rstrip().rstrip(";"))
