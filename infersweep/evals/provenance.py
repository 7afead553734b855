"""Where an eval ran: the fields that join it to the benchmark rows of the same job.

Taken from the job's result manifest (config key, image, run id, attempt, job id, executor)
and its matrix row (model prefix, recipe fingerprint, image, parallelism); both optional.
"""

from __future__ import annotations

import json

from infersweep.diagnostics import Diagnostic, InputError

KEYS = ("config-key", "recipe-fingerprint", "image", "model-prefix", "parallelism", "run-id",
        "attempt", "job-id", "executor", "srt-slurm-commit", "atom-revision", "isl", "osl",
        "conc")
_PAR = ("num-worker", "tp", "pp", "ep", "dcp-size", "pcp-size", "dp-attn")


def _load(path: str, what: str) -> dict:
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except FileNotFoundError:
        raise InputError(Diagnostic(path, 0, 0, f"{what}: file not found")) from None
    except ValueError as exc:
        line = getattr(exc, "lineno", 0)
        raise InputError(Diagnostic(path, line, getattr(exc, "colno", 0),
                                    f"{what}: not JSON ({getattr(exc, 'msg', exc)})")) from None
    except OSError as exc:
        raise InputError(Diagnostic(path, 0, 0, f"{what}: cannot read ({exc.strerror})")) \
            from None
    if not isinstance(data, dict):
        raise InputError(Diagnostic(path, 1, 1, f"{what}: expected a JSON object"))
    return data


def parallelism(row: dict) -> dict:
    if isinstance(row.get("prefill"), dict) or isinstance(row.get("decode"), dict):
        return {role: {k: row[role][k] for k in _PAR if k in row[role]}
                for role in ("prefill", "decode") if isinstance(row.get(role), dict)}
    return {k: row[k] for k in _PAR if k in row}


def from_files(row_path: str | None, manifest_path: str | None) -> dict:
    out: dict = {}
    if row_path:
        row = _load(row_path, "--row")
        if "recipe-fingerprint" not in row:
            from infersweep.changelog.buckets import recipe_fingerprint

            row = dict(row, **{"recipe-fingerprint": recipe_fingerprint(row)})
        out.update({k: row.get(k) for k in ("recipe-fingerprint", "image", "model-prefix",
                                             "isl", "osl", "config-key")})
        out["parallelism"] = parallelism(row)
        out["conc"] = row.get("eval-conc")
    if manifest_path:
        man = _load(manifest_path, "--manifest")
        p = man.get("provenance")
        if not isinstance(p, dict) or not isinstance(p.get("config-key"), str):
            raise InputError(Diagnostic(manifest_path, 1, 1, "--manifest: no provenance with a "
                                        "config-key", "expected a result manifest "
                                        "(schemas/result-manifest.schema.json)"))
        for k in ("config-key", "image", "run-id", "attempt", "job-id", "executor",
                  "srt-slurm-commit", "atom-revision"):
            if p.get(k) is not None:
                out[k] = p[k]
    return {k: v for k, v in out.items() if v is not None}


def normalise(p: dict) -> dict:
    return {k: p.get(k) for k in KEYS}
