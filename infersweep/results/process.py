"""One client result JSON plus its manifest entry becomes one normalised row.

Field names and meaning are InferenceX's (``tput_per_gpu``, ``median_ttft`` in seconds,
``p99_intvty`` = 1000 / p99 TPOT, ...). On top of them a row keeps what InferenceX drops (the
raw throughputs and counts) and the provenance that joins it to evals and to its job. Where
InferenceX crashes (a TPOT of 0, a null concurrency) a row gets a null field and a warning;
where it trusts file names (GPU counts) the manifest's counts are checked against the matrix
row's workers × TP × PP × PCP. The result file must lie inside the job folder
(:mod:`infersweep.results.jobpaths`), and the row must hold numbers an engine can produce
(:mod:`infersweep.results.plausible`): else the point is refused, located in its file.
"""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from infersweep.changelog.buckets import recipe_fingerprint
from infersweep.diagnostics import Diagnostic, InputError
from infersweep.results import fastschema, jobpaths, pergpu, plausible
from infersweep.rowjobs import manifest as manifests

ROW_VERSION = 1
ROW_SUFFIX = ".row.json"
STATS = ("mean", "median", "std", "p90", "p99", "p99.9")
LATENCIES = ("ttft", "tpot", "itl", "e2el")
COUNTS = ("num_prompts", "completed", "failed", "total_input_tokens", "total_output_tokens")
RATES = ("duration", "request_throughput", "output_throughput", "total_token_throughput")
POWER_SCHEMA_VERSION = 2
_NON_FINITE = re.compile(r"\b(NaN|-?Infinity)\b")


@dataclass
class Point:
    """One manifest entry with the files around it."""
    manifest_path: Path
    manifest: dict
    entry: dict
    row: dict | None  # the matrix row (row.json beside the manifest), when there is one
    fingerprint: str | None = None  # the row's recipe fingerprint
    index: int = 0  # the entry's place in the manifest's points
    root: str | None = None  # the manifest's folder, resolved (once per manifest)

    @property
    def label(self) -> str:
        prov = self.manifest["provenance"]
        return f"{prov['config-key']} {self.manifest['name']} c={self.entry['conc']}"

    def result_path(self) -> Path | None:
        """The result file, which must be inside the job folder (``results-path``)."""
        f = self.entry.get("file")
        if not f:
            return None
        return jobpaths.inside(self.manifest_path, f, f"/points/{self.index}/file", self.root)


@dataclass
class Processed:
    row: dict | None
    warnings: list[str] = field(default_factory=list)


def _err(path, message: str, hint: str = "", line: int = 0, col: int = 0,
         rule: str = "result") -> InputError:
    return InputError(Diagnostic(str(path), line, col, message, hint, rule))


def key_position(path: Path, key: str) -> tuple[int, int]:
    """Line and column of ``"key":`` in a JSON file (0, 0 when it cannot be found): read
    again only when there is something to point at."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return 0, 0
    m = re.search(r'"' + re.escape(key) + r'"\s*:', text)
    if m is None:
        return 0, 0
    return text.count("\n", 0, m.start()) + 1, m.start() - text.rfind("\n", 0, m.start())


def _bad_number(path: Path, label: str, key: str, value, expected: str) -> InputError:
    line, col = key_position(path, key)
    return _err(path, f"{label}: {key} is {value!r}, expected {expected}",
                "the client writes finite numbers >= 0, and null for a statistic it could "
                "not compute; rerun the point", line, col, rule="results-number")


def _load_manifest(path: Path) -> dict:
    """The manifest, checked against its schema; the fast check first, the located
    messages of :func:`infersweep.rowjobs.manifest.load` when it does not pass."""
    try:
        data = orjson.loads(path.read_bytes())
    except (OSError, ValueError):
        data = None
    if data is not None and fastschema.valid(data, manifests.SCHEMA):
        return data
    return manifests.load(path)


def points_of(manifest_path: Path) -> list[Point]:
    """Every point of one manifest (checked against its schema), with its matrix row."""
    data, row, fp = job_of(manifest_path)
    root = os.path.realpath(manifest_path.parent)
    return [Point(manifest_path, data, e, row, fp, i, root)
            for i, e in enumerate(data["points"])]


def job_of(manifest_path: Path) -> tuple[dict, dict | None, str | None]:
    """One job folder's manifest (checked against its schema), its matrix row (``row.json``
    beside it, when there is one) and the row's recipe fingerprint."""
    data = _load_manifest(manifest_path)
    row_path = manifest_path.parent / "row.json"
    row = None
    if row_path.is_file():
        try:
            row = json.loads(row_path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise _err(row_path, f"the matrix row cannot be read: {exc}",
                       "restore the row.json `sweep run` wrote beside the manifest") from None
        if not isinstance(row, dict):
            raise _err(row_path, "the matrix row is not a JSON object")
    fp = (row.get("recipe-fingerprint") or recipe_fingerprint(row)) if row else None
    return data, row, fp


def read_result(path: Path, label: str) -> dict:
    """The client's result JSON; NaN/Infinity anywhere is bad input, located."""
    if not path.is_file():
        raise _err(path, f"{label}: the manifest names this result file but it does not exist",
                   "rerun the point (sweep run --previous-manifest) or restore the file")
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise _err(path, f"{label}: cannot read the result file: {exc}") from None
    try:  # the common case, fast; orjson refuses NaN and Infinity like any error
        data = orjson.loads(raw)
    except orjson.JSONDecodeError:
        data = None
    if isinstance(data, dict):
        return data
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _err(path, f"{label}: cannot read the result file: {exc}") from None

    def no_constants(token):
        raise ValueError(token)

    try:
        data = json.loads(text, parse_constant=no_constants)
    except json.JSONDecodeError as exc:
        raise _err(path, f"{label}: not valid JSON: {exc.msg}", line=exc.lineno,
                   col=exc.colno) from None
    except ValueError as exc:
        m = _NON_FINITE.search(text)
        line = text.count("\n", 0, m.start()) + 1 if m else 0
        col = m.start() - text.rfind("\n", 0, m.start()) if m else 0
        raise _err(path, f"{label}: {exc} is not a number a result may hold",
                   "the client writes null for a statistic it could not compute; "
                   "rerun the point", line, col, rule="results-number") from None
    if not isinstance(data, dict):
        raise _err(path, f"{label}: the result is not a JSON object")
    return data


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def check_result(data: dict, path: Path, point: Point) -> list[str]:
    """Raise on what makes the result unusable; return warnings for what only nulls a field."""
    label = point.label
    missing = [k for k in ("max_concurrency", *COUNTS, *RATES) if k not in data]
    if missing:
        raise _err(path, f"{label}: the result has no {', '.join(missing)}",
                   "this is not a complete `bench serve` result; rerun the point")
    for k in COUNTS:
        v = data[k]
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise _bad_number(path, label, k, v, "a non-negative integer")
    for k in RATES:
        v = data[k]
        if not _number(v) or v < 0:
            raise _bad_number(path, label, k, v, "a non-negative number")
    warnings = []
    conc = data["max_concurrency"]
    want = point.entry["conc"]
    if conc is None:
        warnings.append(f"{label}: max_concurrency is null; conc {want} is taken from the "
                        "manifest")
    elif isinstance(conc, bool) or not isinstance(conc, int) or conc != want:
        raise _err(path, f"{label}: the result is for concurrency {conc!r}, the manifest "
                         f"point for {want}", "the file belongs to another point")
    return warnings


def _role(row: dict, side: str) -> dict:
    part = row.get(side) or {}
    return {"tp": int(part.get("tp", 0)), "pp": int(part.get("pp", 1) or 1),
            "dcp_size": int(part.get("dcp-size", 1) or 1),
            "pcp_size": int(part.get("pcp-size", 1) or 1), "ep": int(part.get("ep", 0)),
            "dp_attention": str(bool(part.get("dp-attn", False))).lower(),
            "num_workers": int(part.get("num-worker", 0))}


def topology(row: dict | None, gpus: dict) -> str:
    """A short name for the parallelism: ``1p-tp8+1d-tp8``, ``2p-tp8-dpa+1d-tp8-dpa``, ``tp8``."""
    if row is None:
        return f"{gpus['prefill']}p-gpu+{gpus['decode']}d-gpu"

    def one(r: dict, tag: str) -> str:
        parts = [f"{r['num_workers']}{tag}-tp{r['tp']}" if tag else f"tp{r['tp']}"]
        for k, name in (("pp", "pp"), ("pcp_size", "pcp"), ("dcp_size", "dcp")):
            if r[k] > 1:
                parts.append(f"{name}{r[k]}")
        if r["ep"] > 1:
            parts.append(f"ep{r['ep']}")
        if r["dp_attention"] == "true":
            parts.append("dpa")
        return "-".join(parts)

    if row.get("prefill") is not None:
        return one(_role(row, "prefill"), "p") + "+" + one(_role(row, "decode"), "d")
    return one(_single(row), "")


def _single(row: dict) -> dict:
    return {"tp": int(row.get("tp", 0)), "pp": int(row.get("pp", 1) or 1),
            "dcp_size": int(row.get("dcp-size", 1) or 1),
            "pcp_size": int(row.get("pcp-size", 1) or 1), "ep": int(row.get("ep", 0)),
            "dp_attention": str(bool(row.get("dp-attn", False))).lower(), "num_workers": 1}


def parallelism(point: Point) -> tuple[dict, int, int]:
    """Row fields for the parallelism, and the prefill and decode GPU counts.

    The counts are the manifest's (from the recipe's ``resources``); the matrix row's
    workers × TP × PP × PCP must agree with them."""
    gpus = point.manifest["gpus"]
    row = point.row
    where = point.manifest_path
    if row is None:
        raise _err(where, f"{point.label}: no row.json beside the manifest",
                   "the matrix row says the parallelism; keep the folder `sweep run` wrote")
    if row.get("prefill") is not None:
        pre, dec = _role(row, "prefill"), _role(row, "decode")
        want_p = pre["num_workers"] * pre["tp"] * pre["pp"] * pre["pcp_size"]
        want_d = dec["num_workers"] * dec["tp"] * dec["pp"] * dec["pcp_size"]
        if (want_p, want_d) != (gpus["prefill"], gpus["decode"]):
            raise _err(where, f"{point.label}: the manifest counts {gpus['prefill']} prefill "
                              f"and {gpus['decode']} decode GPUs, the matrix row's workers × "
                              f"TP × PP × PCP give {want_p} and {want_d}",
                       "the recipe's resources and the config's parallelism disagree; fix one")
        fields = {"is_multinode": True}
        for side, r in (("prefill", pre), ("decode", dec)):
            for k, v in r.items():
                fields[f"{side}_{k}"] = v
        fields.update(num_prefill_gpu=gpus["prefill"], num_decode_gpu=gpus["decode"])
        return fields, gpus["prefill"], gpus["decode"]
    one = _single(row)
    n = one["tp"] * one["pp"] * one["pcp_size"]
    if n != gpus["total"]:
        raise _err(where, f"{point.label}: the manifest counts {gpus['total']} GPUs, the matrix "
                          f"row's TP × PP × PCP give {n}",
                   "the recipe's resources and the config's parallelism disagree; fix one")
    fields = {"is_multinode": False, **{k: one[k] for k in
                                        ("tp", "pp", "dcp_size", "pcp_size", "ep",
                                         "dp_attention")}}
    return fields, 0, n


def latency_fields(data: dict, label: str, path: Path) -> tuple[dict, list[str]]:
    """``…_ms`` statistics as seconds without ``_ms``; TPOT statistics also as interactivity.
    A statistic that is absent or null is a null field and a warning; one that is not a
    finite number >= 0 is bad input (``results-number``)."""
    out, warnings = {}, []
    for metric in LATENCIES:
        for stat in STATS:
            key = f"{stat}_{metric}_ms"
            v = data.get(key)
            if v is None:
                if stat != "std":
                    warnings.append(f"{label}: {key} is {'missing' if key not in data else 'null'};"
                                    f" {stat}_{metric} is null")
            elif not _number(v) or v < 0:
                raise _bad_number(path, label, key, v, "a finite number of milliseconds >= 0")
            out[f"{stat}_{metric}"] = None if v is None else v / 1000.0
            if metric == "tpot" and stat != "std":
                if v is None or v == 0:
                    if v == 0:
                        warnings.append(f"{label}: {key} is 0; {stat}_intvty is null")
                    out[f"{stat}_intvty"] = None
                else:
                    out[f"{stat}_intvty"] = 1000.0 / v
    return out, warnings


def implausible(row: dict, path: Path, label: str, result: dict | None = None
                ) -> InputError | None:
    """The findings of :mod:`infersweep.results.plausible` on a point's row (and on its
    client ``result``'s per-request output lengths), located in its file, or None."""
    whole = plausible.requests_read_whole(result) if result is not None else 0
    found = plausible.check(row, plausible.RESULT, read_whole=whole)
    if result is not None:
        found += plausible.requested_output(result, row.get("run_osl"))
    if not found:
        return None
    diags = []
    for f in found:
        line, col = key_position(path, plausible.RESULT.key(f.field).split(" ")[0])
        diags.append(Diagnostic(str(path), line, col, f"{label}: {f.message}", f.hint, f.rule))
    return InputError(diags)


def process_point(point: Point, *, allow_incomplete: bool = False) -> Processed:
    """The normalised row of one point, or no row (with a warning) for a point without file."""
    path = point.result_path()
    entry, prov = point.entry, point.manifest["provenance"]
    if path is None:
        return Processed(None, [f"{point.label}: no result ({entry['status']}: "
                                f"{entry['reason']})"])
    data = read_result(path, point.label)
    warnings = check_result(data, path, point)
    requested = entry["requested"]
    successful = (data["num_prompts"] == requested and data["completed"] == requested
                  and data["failed"] == 0)
    if not successful and not allow_incomplete:
        raise _err(path, f"{point.label}: completed {data['completed']} of {requested} "
                         f"requested ({data['failed']} failed, the client was asked for "
                         f"{data['num_prompts']})",
                   "rerun the point, or pass --allow-incomplete to keep it as an "
                   "unsuccessful row")
    par, n_prefill, n_decode = parallelism(point)
    row = point.row
    if par["is_multinode"] and n_prefill <= 0:
        raise _err(point.manifest_path, f"{point.label}: no prefill GPUs",
                   "a multi-node row needs prefill workers")
    per_gpu = pergpu.per_gpu(data["total_token_throughput"], data["output_throughput"],
                             multinode=par["is_multinode"], prefill=n_prefill, decode=n_decode)
    lat, lat_warnings = latency_fields(data, point.label, path)
    warnings += lat_warnings
    out = {
        "row-version": ROW_VERSION,
        "hw": row.get("runner"), "conc": entry["conc"], "image": row.get("image"),
        "model": data.get("model_id") or row.get("model"),
        "infmax_model_prefix": row.get("model-prefix"), "framework": row.get("framework"),
        "precision": row.get("precision"), "spec_decoding": row.get("spec-decoding"),
        "disagg": bool(row.get("disagg", False)),
        "recipe_fingerprint": point.fingerprint,
        "isl": int(row["isl"]), "osl": int(row["osl"]),
    }
    if row.get("router"):
        out["router"] = {"name": row["router"].get("name"), "version": row["router"].get("version")}
    if row.get("kv-p2p-transfer"):
        out["kv_p2p_transfer"] = row["kv-p2p-transfer"]
    out.update(par)
    out.update(per_gpu)
    out.update(lat)
    out.update({k: data[k] for k in (*RATES, *COUNTS)})
    out.update({"power_metric_schema_version": POWER_SCHEMA_VERSION, "power_valid": 0})
    out.update({
        "config_key": prov["config-key"], "recipe_name": point.manifest["name"],
        "topology": topology(row, point.manifest["gpus"]),
        "run_isl": entry["isl"], "run_osl": entry["osl"],
        "scale_down": point.manifest["scale-down"],
        "srt_slurm_commit": prov["srt-slurm-commit"], "engine_revision": prov["atom-revision"],
        "executor": prov["executor"], "job_id": prov["job-id"], "run_id": prov["run-id"],
        "attempt": entry["attempt"], "requested": requested, "successful": successful,
        "result_file": path.as_posix(),
    })
    problem = implausible(out, path, point.label, data)
    if problem is not None:
        raise problem
    return Processed(out, warnings)


def row_file_name(row: dict) -> str:
    return f"{row['recipe_name']}-c{row['conc']}-a{row['attempt']}{ROW_SUFFIX}"
