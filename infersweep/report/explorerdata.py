"""The explorer's data: every staged run's points in one compact file the page reads once.

Points are columns, not an object per point. What a series of points shares (the run,
config, recipe, hardware, framework, precision, ISL/OSL, image, recipe fingerprint, job) is
stored once per series, each text column as a list of distinct values and a code per series;
a series' points are stored together (the file keeps a count per series), each with its
concurrency and metrics. In the file every column is packed into a short string
(:mod:`.packing`: numbers at 4 significant digits): a browser reads a few long strings far
faster than arrays of a million numbers. The file is a script (``explorer-data.js``) that
sets one global, because a page opened from ``file://`` may not fetch a JSON file beside it.

The run and config pages read the same file: it also holds what their tables show beyond the
explorer's metrics (p99 interactivity, the requests completed of those sent, srt-slurm
commit, engine revision, the point's attempt; the median TPOT is 1 / the median
interactivity, as the results code defines interactivity), the points the explorer leaves
out (unsuccessful or without ISL/OSL) as plain rows, each run's and config's page, and the
ISL/OSL numbers of each sequence label.

:func:`arrange` gives the data with plain lists (what :func:`load_script` reads back);
:func:`script` packs it.
"""

from __future__ import annotations

import operator

import numpy as np

from infersweep.report import datascript, packing, pareto
from infersweep.report.costs import GpuCosts
from infersweep.report.views import config_page_path, run_order, run_page_path
from infersweep.results.agenticagg import offload_mode
from infersweep.store import agentic as agenticstore
from infersweep.store.model import StagedRun

FILE = "explorer-data.js"
GLOBAL = "INFERSWEEP_EXPLORER_DATA"
VERSION = 3
SEED_SEQ = "8k/1k"
AGENTIC_SEQ = "agentic"  # the ISL/OSL value of agentic-coding results
# series columns (text, dictionary-encoded) and what a point row gives for each; ``local``
# is "yes" for an agentic result that may not be published (a scaled-down local run)
SERIES = ("config", "model", "hw", "cost_hw", "vendor", "framework", "precision", "spec",
          "disagg", "seq", "recipe", "topology", "image", "fingerprint", "job", "kind",
          "local", "srt_commit", "engine_rev", "attempt")
# point columns: name -> the results row's field (latencies in seconds, as rows keep them)
METRICS = {"tput": "tput_per_gpu", "tput_in": "input_tput_per_gpu",
           "tput_out": "output_tput_per_gpu", "intvty": "median_intvty",
           "e2el": "median_e2el", "ttft50": "median_ttft", "ttft90": "p90_ttft",
           "ttft99": "p99_ttft", "jpt_measured": "joules_per_total_token",
           "intvty99": "p99_intvty"}
# agentic results only: the cache hit rates and KV cache usage (fractions), from the store's
# columns (infersweep.store.agentic.columns)
AGENTIC_METRICS = {"gpu_hit": "server_gpu_cache_hit_rate",
                   "cpu_hit": "server_cpu_cache_hit_rate",
                   "theory_hit": "theoretical_cache_hit_rate", "kv_usage": "gpu_kv_cache_usage"}
POINT_COLUMNS = (*METRICS, *AGENTIC_METRICS)
# dictionary-encoded point columns (few distinct values): the concurrency, and the requests
# completed of those sent as one [completed, sent] pair
CODED_COLUMNS = ("conc", "requests")
# a row's fields that decide its series (with its run): rows alike in these share one
_SERIES_FIELDS = ("config_key", "model", "hw", "framework", "precision", "spec_decoding",
                  "disagg", "isl", "osl", "scale_down", "recipe_name", "topology", "image",
                  "recipe_fingerprint", "job_id", "srt_slurm_commit", "engine_revision",
                  "attempt")
_METRIC_FIELDS = tuple(METRICS.values())
_series_fields = operator.itemgetter(*_SERIES_FIELDS)
_metric_fields = operator.itemgetter(*_METRIC_FIELDS)
_REQUEST_FIELDS = ("completed", "num_prompts")
_request_fields = operator.itemgetter(*_REQUEST_FIELDS)
# an unsuccessful point (or one without ISL/OSL): a plain row, for the run and config pages
_INCOMPLETE = {"config": "config_key", "recipe": "recipe_name", "topology": "topology",
               "isl": "isl", "osl": "osl", "scale_down": "scale_down", "conc": "conc",
               **METRICS, "completed": "completed", "prompts": "num_prompts",
               "successful": "successful", "image": "image",
               "srt_commit": "srt_slurm_commit", "engine_rev": "engine_revision",
               "job": "job_id", "attempt": "attempt"}


def _fields(getter, names: tuple, p: dict) -> tuple:
    """The row's values of ``names`` (None for a missing one), fast when it has them all."""
    try:
        return getter(p)
    except KeyError:
        return tuple(p.get(f) for f in names)


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


def _int(v) -> int | None:
    if type(v) is int or v is None:
        return v
    n = pareto.number(v)
    return None if n is None else int(n)


def _numbers(values: list) -> list:
    """A column as floats or None (what :func:`pareto.number` reads), at once when it holds
    only finite floats and None, as rows do."""
    missing = values.count(None)
    if missing == len(values):
        return values
    if set(map(type, values)) <= {float, type(None)}:
        a = np.array(values, dtype=np.float64)  # None as nan
        if not np.isinf(a).any() and int(np.isnan(a).sum()) == missing:
            return values
    return [pareto.number(v) for v in values]


class _Columns:
    """Series and their points as they are appended; text columns dictionary-encoded."""

    def __init__(self):
        self.codes = {c: [] for c in SERIES}
        self.values = {c: {} for c in SERIES}
        self.series_run: list[int] = []
        self.series_index: dict[tuple, int] = {}
        self.series_points: list[list[tuple]] = []  # per series: (conc, metrics, requests)
        self.row_series: dict[tuple, int] = {}      # (run, row's series fields) -> series
        self.seqs: dict[str, list] = {}             # sequence label -> [isl, osl, scale-down]
        self.incomplete: list[dict] = []

    def series(self, run: int, attrs: dict) -> int:
        key = (run, *(attrs[c] for c in SERIES))
        n = self.series_index.get(key)
        if n is None:
            n = self.series_index[key] = len(self.series_run)
            self.series_run.append(run)
            self.series_points.append([])
            for c in SERIES:
                self.codes[c].append(self.values[c].setdefault(attrs[c], len(self.values[c])))
        return n

    def point(self, series: int, conc, metrics: tuple, requests: tuple = (None, None)
              ) -> None:
        done, sent = requests
        pair = None if done is None and sent is None else [_int(done), _int(sent)]
        self.series_points[series].append((_int(conc), metrics, pair))

    def points(self) -> dict:
        """The point columns, each series' points together, in series order."""
        rows = [pt for pts in self.series_points for pt in pts]
        out = {"series": [s for s, pts in enumerate(self.series_points) for _ in pts]}
        conc, metrics, requests = zip(*rows, strict=True) if rows else ((), (), ())
        out["conc"] = list(conc)
        columns = zip(*metrics, strict=True) if metrics else [()] * len(POINT_COLUMNS)
        for name, column in zip(POINT_COLUMNS, columns, strict=True):
            out[name] = _numbers(list(column))
        out["requests"] = list(requests)
        return out


def _attrs(p: dict, costs: GpuCosts | None, kind: str, seq: str, topology: str,
           local: bool = False) -> dict:
    hw = _text(p.get("hw"))
    cost_hw = costs.entry_name(hw) if costs else None
    vendor = costs.hardware[cost_hw].vendor if cost_hw else ""
    return {"config": _text(p.get("config_key")), "model": _text(p.get("model")), "hw": hw,
            "cost_hw": cost_hw or "", "vendor": vendor, "framework": _text(p.get("framework")),
            "precision": _text(p.get("precision")), "spec": _spec(p.get("spec_decoding")),
            "disagg": _flag(p.get("disagg")), "seq": seq, "recipe": _text(p.get("recipe_name")),
            "topology": topology, "image": _text(p.get("image")),
            "fingerprint": _text(p.get("recipe_fingerprint")), "job": _text(p.get("job_id")),
            "kind": kind, "local": "yes" if local else "",
            "srt_commit": _text(p.get("srt_slurm_commit")),
            "engine_rev": _text(p.get("engine_revision")), "attempt": _text(p.get("attempt"))}


_NO_AGENTIC = (None,) * len(AGENTIC_METRICS)


def _incomplete(cols: _Columns, run: int, p: dict) -> None:
    row = {k: p.get(f) for k, f in _INCOMPLETE.items()}
    for k in ("config", "recipe", "topology", "image", "srt_commit", "engine_rev", "job"):
        row[k] = _text(row[k])
    for k in METRICS:
        row[k] = pareto.number(row[k])
    for k in ("isl", "osl", "conc", "attempt", "completed", "prompts"):
        row[k] = _int(row[k])
    row["scale_down"] = pareto.number(row["scale_down"]) or 1
    row["successful"] = bool(row["successful"] if row["successful"] is not None else True)
    cols.incomplete.append({"run": run, **row})


def _fixed(cols: _Columns, run: int, p: dict, costs: GpuCosts | None) -> None:
    if not p.get("successful", True) or p.get("isl") is None or p.get("osl") is None:
        _incomplete(cols, run, p)
        return
    key = (run, _fields(_series_fields, _SERIES_FIELDS, p))
    try:
        series = cols.row_series.get(key)
    except TypeError:  # a field that is not hashable: no shortcut
        key, series = None, None
    if series is None:
        seq = seq_label(p["isl"], p["osl"], p.get("scale_down") or 1)
        cols.seqs.setdefault(seq, [_int(p["isl"]), _int(p["osl"]),
                                   pareto.number(p.get("scale_down")) or 1])
        topology = _text(p.get("topology") or p.get("recipe_name"))
        series = cols.series(run, _attrs(p, costs, "fixed-seq-len", seq, topology))
        if key is not None:
            cols.row_series[key] = series
    metrics = _fields(_metric_fields, _METRIC_FIELDS, p)
    if p.get("power_valid") is False:  # a power measurement the row says is not valid
        metrics = tuple(None if m == "jpt_measured" else v
                        for m, v in zip(METRICS, metrics, strict=True))
    cols.point(series, p.get("conc"), (*metrics, *_NO_AGENTIC),
               _fields(_request_fields, _REQUEST_FIELDS, p))


def _agentic(cols: _Columns, run: int, entry: dict, costs: GpuCosts | None) -> None:
    r = entry["result"]
    values = agenticstore.columns(entry)
    p = {**r, "config_key": entry["config_key"], "image": values.get("image"),
         "recipe_fingerprint": values.get("recipe_fingerprint"), "recipe_name": entry["name"]}
    attrs = _attrs(p, costs, "agentic", AGENTIC_SEQ, f"KV offload {offload_mode(r)}",
                   local=not values.get("publishable"))
    metrics = [None if m == "jpt_measured" else values.get(f) for m, f in METRICS.items()]
    metrics += [values.get(f) for f in AGENTIC_METRICS.values()]
    cols.point(cols.series(run, attrs), values.get("conc"), tuple(metrics))


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
    for s, pts in enumerate(cols.series_points):
        if names["model"][cols.codes["model"][s]] == model:
            seq = names["seq"][cols.codes["seq"][s]]
            counts[seq] = counts.get(seq, 0) + len(pts)
    seq = SEED_SEQ if SEED_SEQ in counts else min(counts, key=lambda q: (-counts[q], q))
    return {"model": model, "seq": seq}


def arrange(runs: list[StagedRun], costs: GpuCosts | None) -> dict:
    """The data object: runs (oldest first, with their pages), series, points (each
    series' together, in series order), the points left out of them, costs, the default view
    and the pages of the configs; columns as plain lists."""
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
                 "url": [r.url or "" for r in ordered],
                 "page": [run_page_path(r) for r in ordered]},
        "series": series, "points": cols.points(), "incomplete": cols.incomplete,
        "seqs": dict(sorted(cols.seqs.items())),
        "config_pages": {k: config_page_path(k) for k in sorted(
            {*cols.values["config"], *(r["config"] for r in cols.incomplete)})},
        "costs": costs.as_data() if costs else {"tiers": [], "hardware": {}},
        "defaults": _defaults(cols),
    }


def _coded(column: list) -> dict:
    """Ints or pairs of them (None: none) as their distinct values and a code per point
    (0: none)."""
    def key(c):
        return tuple(c) if isinstance(c, list) else c

    def order(v):  # a pair may have a None in it
        return tuple((x is None, x or 0) for x in v) if isinstance(v, tuple) else v
    values = sorted({key(c) for c in column if c is not None}, key=order)
    code = {c: i + 1 for i, c in enumerate(values)}
    return {"values": [list(v) if isinstance(v, tuple) else v for v in values],
            "codes": packing.pack_ints(code.get(key(c), 0) for c in column)}


def _series_column(codes: list[int], config: list[int]) -> dict:
    """A series column's codes, packed: one per config (``by: "config"``) when the config
    decides it (the model, hardware, framework... of a config key), else one per series."""
    of_config: dict[int, int] = {}
    if all(of_config.setdefault(c, v) == v for c, v in zip(config, codes, strict=True)):
        top = max(of_config, default=-1) + 1
        return {"by": "config", "codes": packing.pack_ints(of_config.get(c, 0)
                                                           for c in range(top))}
    return {"codes": packing.pack_ints(codes)}


def pack(data: dict) -> dict:
    """:func:`arrange`'s data with its columns packed (:mod:`.packing`): a count of points
    per series instead of a series per point, concurrency and requests dictionary-encoded, a
    series column the config decides with a code per config."""
    points, series = data["points"], data["series"]
    n_series = len(series["run"])
    counts = [0] * n_series
    last = -1
    for s in points["series"]:
        if s < last:
            raise ValueError("the explorer's points are not grouped by series")
        counts[s] += 1
        last = s
    packed_series = {k: _series_column(v["codes"], series["config"]["codes"]) | {
        "values": v["values"]} for k, v in series.items() if k not in ("run", "config")}
    packed_series["config"] = {"values": series["config"]["values"],
                               "codes": packing.pack_ints(series["config"]["codes"])}
    packed_series["run"] = packing.pack_ints(series["run"])
    packed_series["count"] = packing.pack_ints(counts)
    packed_points = {name: _coded(points[name]) for name in CODED_COLUMNS}
    for name in POINT_COLUMNS:
        packed_points[name] = packing.pack_numbers(points[name])
    return {**data, "packed": True, "series": packed_series, "points": packed_points}


def unpack(data: dict) -> dict:
    """:func:`pack`'s data back in plain lists (numbers at the packed precision)."""
    series = {k: {"values": v["values"], "codes": packing.unpack_ints(v["codes"])}
              for k, v in data["series"].items() if k not in ("run", "count")}
    config = series["config"]["codes"]
    for k, v in data["series"].items():
        if isinstance(v, dict) and v.get("by") == "config":
            series[k]["codes"] = [series[k]["codes"][c] for c in config]
    series["run"] = packing.unpack_ints(data["series"]["run"])
    counts = packing.unpack_ints(data["series"]["count"])
    points = {"series": [s for s, n in enumerate(counts) for _ in range(n)]}
    n = len(points["series"])
    for name, col in data["points"].items():
        if name in CODED_COLUMNS:
            values = [None, *col["values"]]
            points[name] = [values[c] for c in packing.unpack_ints(col["codes"])]
        else:
            points[name] = packing.unpack_numbers(col, n)
    out = {k: v for k, v in data.items() if k != "packed"}
    return {**out, "series": series, "points": points}


def script(data: dict) -> str:
    """``data`` packed, as the script the page loads (packed columns hold no character the
    script escapes)."""
    return datascript.script(GLOBAL, pack(data))


def load_script(text: str) -> dict:
    """The data object back from :func:`script`'s text, in plain lists (for tests and
    tools)."""
    return unpack(datascript.load(GLOBAL, text, "an explorer data file"))
