"""Agentic-coding results in a run's aggregate (``results collect``'s ``agentic`` list).

An agentic result is not a results row: it has no ISL/OSL and a shape of its own
(``schemas/agentic-result.schema.json``). The aggregate carries each one whole, with the
config key it belongs to, where it was found and what the agentic gates said of it when it
was collected. Reading an aggregate back, each result is judged again on its exports when
its file is still where the aggregate says (a run folder, or downloaded artifacts holding
the job folders); one whose file is not there is named unusable, never trusted.
"""

from __future__ import annotations

from pathlib import Path

import orjson

from infersweep.diagnostics import Diagnostic, InputError
from infersweep.results import fastschema

RESULT_SCHEMA = "agentic-result"
RULE_EVIDENCE = "agentic-evidence"
SUFFIX = ".agentic.json"


def _job_config_key(file: str | None) -> str | None:
    """The config key the job's manifest records (its provenance), for a result inside it."""
    from infersweep.agentic.gatepoints import job_file

    manifest = job_file(Path(file), "manifest.json") if file else None
    if manifest is None:
        return None
    try:
        key = orjson.loads(manifest.read_bytes())["provenance"]["config-key"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return key if isinstance(key, str) and key else None


def config_key(result: dict, row: dict | None, file: str | None = None) -> str:
    """The matrix row's ``config-key`` when the row beside the result names one, else the
    one its job's manifest records, else ``<model prefix>-<precision>-<hardware>-<framework>``
    (``cluster:`` dropped)."""
    if isinstance(row, dict) and isinstance(row.get("config-key"), str) and row["config-key"]:
        return row["config-key"]
    if (key := _job_config_key(file)) is not None:
        return key
    hw = str(result.get("hw") or "unknown").removeprefix("cluster:")
    parts = [result.get("infmax_model_prefix") or result.get("model"), result.get("precision"),
             hw, result.get("framework")]
    return "-".join(str(p) for p in parts if p) or "agentic"


def offload_mode(result: dict) -> str:
    """A result's KV-offload mode as people read it: ``none``, or ``dram/<backend>``."""
    mode = str(result.get("kv_offloading") or "none")
    backend = result.get("kv_offload_backend") or ""
    return f"{mode}/{backend}" if mode != "none" and backend else mode


def _name(file: str) -> str:
    base = Path(file).name
    return base[: -len(SUFFIX)] if base.endswith(SUFFIX) else base


def _problem_text(p: dict) -> str:
    return f"[{p['rule']}] {p['message']}" + (f" ({p['hint']})" if p.get("hint") else "")


def _load(entry: dict) -> dict | None:
    if isinstance(entry.get("result"), dict):
        return entry["result"]
    from infersweep.agentic.resultexports import load_json_object

    try:
        return load_json_object(Path(entry["file"]), "agentic result")
    except InputError:
        return None


def entries(gate_entries: list[dict]) -> list[dict]:
    """The aggregate's ``agentic`` list from the gate's entries
    (:func:`infersweep.agentic.gatepoints.examine`): every result that is an agentic result
    (one that is not is left out; ``results check`` names it), sorted."""
    out = []
    for e in gate_entries:
        data = _load(e)
        if data is None or not _is_result(data):
            continue
        out.append({"config_key": config_key(data, e.get("row"), e["file"]),
                    "name": _name(e["file"]),
                    "result_file": e["file"],
                    "problems": [_problem_text(p) for p in e["problems"]], "result": data})
    out.sort(key=sort_key)
    return out


def _is_result(data: dict) -> bool:
    from infersweep.config.schema import validate_data

    return fastschema.valid(data, RESULT_SCHEMA) or not validate_data(data, RESULT_SCHEMA)


def sort_key(entry: dict) -> tuple:
    r = entry["result"]
    return (entry["config_key"], offload_mode(r), str(r.get("recipe_fingerprint")),
            r.get("conc") or 0, entry["result_file"])


def _found(raw: str, aggregate: Path) -> Path | None:
    """The result file an aggregate names: as written, else below the aggregate's folder or
    the one above it (downloaded artifacts: ``aggregate/`` beside ``results/``)."""
    p = Path(raw)
    if p.is_absolute():
        return p if p.is_file() else None
    if ".." in p.parts:
        return None
    for base in (Path.cwd(), aggregate.parent.parent, aggregate.parent):
        if (base / p).is_file():
            return base / p
    return None


def reexamine(listed: list[dict], aggregate: Path) -> list[dict]:
    """The gate's entries for an aggregate's ``agentic`` list: each result judged again
    where its file is found; one that is not found is unusable (its exports cannot be read,
    so nothing it says can be checked)."""
    from infersweep.agentic import gatepoints

    out = []
    for item in listed:
        raw, result = item["result_file"], item["result"]
        found = _found(raw, aggregate)
        if found is not None:
            out += gatepoints.examine([found])
            continue
        msg = (f"the aggregate names the agentic result {raw}, which is not here, so its "
               "exports cannot be read and the result cannot be judged")
        out.append({"file": raw, "folder": Path(raw).parent.as_posix(),
                    "fingerprint": result.get("recipe_fingerprint"), "conc": result.get("conc"),
                    "label": f"agentic {result.get('exp_name') or _name(raw)} "
                             f"c={result.get('conc')}",
                    "row": None, "publishable": False, "result": result,
                    "problems": [_as_dict(Diagnostic(
                        str(aggregate), 0, 0, msg, "pass the run folder (or the downloaded "
                        "artifacts) that holds the job folders with their exports",
                        RULE_EVIDENCE))]})
    return out


def _as_dict(d: Diagnostic) -> dict:
    return {"path": d.path, "line": d.line, "col": d.col, "message": d.message,
            "hint": d.hint, "rule": d.rule}


def unique(gate_entries: list[dict]) -> list[dict]:
    """One entry per result file (a folder and an aggregate may both name it)."""
    seen, out = set(), []
    for e in gate_entries:
        key = Path(e["file"]).resolve().as_posix() if Path(e["file"]).exists() else e["file"]
        if key not in seen:
            seen.add(key)
            out.append(e)
    return out
