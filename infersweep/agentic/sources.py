"""Which trace corpus a row replays, and fetching it at its pinned revision.

The choice is InferenceX's (``resolve_trace_source`` in its benchmark library): a model
prefix listed under ``full-context-prefixes`` (DeepSeek-V4, GLM-5.2, MiniMax-M3, Kimi-K3)
replays the full-context corpus, every other one the 256k-capped corpus; an override names
another alias. The aliases, their datasets and revisions are the ``trace-datasets`` block of
``configs/runtimes.yaml``.

:func:`fetch` downloads a source with ``huggingface_hub`` into an HF cache, the layout the
client reads with ``--public-dataset <alias>`` (``HF_HUB_CACHE``). That library belongs to
the replay client's venv, not to this package, so the download runs under a Python that has
it (``python=``, e.g. the client venv's). The revision is resolved first, with a short
timeout: a revision the Hub does not have, or one that no longer resolves to the pinned
``commit``, fails in seconds, before anything is downloaded.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from infersweep.config.schema import validate_doc
from infersweep.diagnostics import Diagnostic, InputError, did_you_mean
from infersweep.pins.lock import LOCK_PATH
from infersweep.yamldoc import load_yaml

KEY = "trace-datasets"


@dataclass(frozen=True)
class TraceSource:
    alias: str
    dataset: str
    revision: str
    commit: str | None = None  # what the revision must resolve to, when pinned
    reason: str = ""


@dataclass(frozen=True)
class TraceDatasets:
    path: str
    full_context_prefixes: tuple[str, ...]
    full_context_alias: str
    default_alias: str
    aliases: dict[str, dict]

    def source(self, alias: str, reason: str = "") -> TraceSource:
        entry = self.aliases[alias]
        return TraceSource(alias, entry["dataset"], entry["revision"], entry.get("commit"),
                           reason)


def load_trace_datasets(path: str | Path = LOCK_PATH) -> TraceDatasets:
    """The ``trace-datasets`` block, checked; :class:`InputError` at file:line:col."""
    doc = load_yaml(path)
    problems = validate_doc(doc, "runtimes")
    block = doc.data.get(KEY) if isinstance(doc.data, dict) else None
    if not problems and block is None:
        problems = [Diagnostic(str(path), 1, 1, f"no '{KEY}' block",
                               "add the trace-datasets block (see docs/agentic.md#traces)",
                               "trace-source")]
    if problems:
        raise InputError(problems)
    for key in ("full-context-alias", "default-alias"):
        if block[key] not in block["aliases"]:
            problems.append(doc.diag((KEY, key), f"{key} '{block[key]}' is not under aliases",
                                     did_you_mean(block[key], block["aliases"]),
                                     rule="trace-source"))
    if problems:
        raise InputError(problems)
    return TraceDatasets(str(path), tuple(block["full-context-prefixes"]),
                         block["full-context-alias"], block["default-alias"],
                         dict(block["aliases"]))


def resolve_source(row: dict, override: str | None = None, *,
                   datasets: TraceDatasets | None = None) -> TraceSource:
    """The corpus ``row`` replays (its ``model-prefix``), or ``override`` when given."""
    table = datasets or load_trace_datasets()
    if override:
        entry = table.aliases.get(override)
        if entry is None or not entry.get("override", False):
            allowed = [a for a, e in table.aliases.items() if e.get("override", False)]
            why = "is not an alias" if entry is None else "is not one an override may pick"
            hint = did_you_mean(override, allowed) or f"one of: {', '.join(allowed)}"
            raise InputError(Diagnostic(table.path, 0, 0, f"trace override '{override}' {why}",
                                        hint, "trace-source"))
        return table.source(override, "override")
    prefix = row.get("model-prefix")
    if not isinstance(prefix, str) or not prefix:
        raise InputError(Diagnostic("<row>", 0, 0, "the row has no model-prefix",
                                    "an agentic-coding row names its model-prefix",
                                    "trace-source"))
    for p in table.full_context_prefixes:
        if prefix.startswith(p):
            return table.source(table.full_context_alias,
                                f"model prefix '{prefix}' starts with '{p}' (full context)")
    return table.source(table.default_alias, f"model prefix '{prefix}' (256k context)")


# Run under a Python that has huggingface_hub; argv[1] is a JSON object of arguments.
_FETCH_SCRIPT = r"""
import json, sys
from huggingface_hub import HfApi, snapshot_download
from huggingface_hub.errors import RepositoryNotFoundError, RevisionNotFoundError
a = json.loads(sys.argv[1])
def done(**kw):
    print(json.dumps(kw)); sys.exit(0)
api = HfApi(endpoint=a["endpoint"])
try:
    sha = api.dataset_info(a["dataset"], revision=a["revision"], timeout=a["timeout"]).sha
except RevisionNotFoundError:
    done(error="revision")
except RepositoryNotFoundError:
    done(error="dataset")
except Exception as e:
    done(error="hub", detail=f"{type(e).__name__}: {e}".splitlines()[0])
if a["commit"] and sha != a["commit"]:
    done(error="changed", sha=sha)
path = snapshot_download(a["dataset"], repo_type="dataset", revision=a["revision"],
                         cache_dir=a["cache_dir"], endpoint=a["endpoint"],
                         etag_timeout=a["timeout"])
done(path=path, sha=sha)
"""


@dataclass(frozen=True)
class Fetched:
    source: TraceSource
    path: Path  # the snapshot directory
    commit: str


def _python_with_hub(python: str | Path | None) -> str:
    if python:
        return str(python)
    if importlib.util.find_spec("huggingface_hub") is not None:
        return sys.executable
    raise InputError(Diagnostic("<fetch>", 0, 0, "huggingface_hub is not installed here",
                                "pass the replay client's venv (--client-venv), which has it",
                                "trace-fetch"))


def fetch(source: TraceSource, cache_dir: str | Path, *, endpoint: str | None = None,
          python: str | Path | None = None, timeout: float = 10.0) -> Fetched:
    """Download ``source`` into the HF cache ``cache_dir`` (its ``hub`` folder)."""
    args = {"dataset": source.dataset, "revision": source.revision, "commit": source.commit,
            "cache_dir": str(cache_dir), "endpoint": endpoint, "timeout": timeout}
    seconds = str(max(1, math.ceil(timeout)))  # the library reads whole seconds
    env = {**os.environ, "HF_HUB_DISABLE_TELEMETRY": "1", "HF_HUB_ETAG_TIMEOUT": seconds,
           "HF_HUB_DOWNLOAD_TIMEOUT": seconds}
    env.pop("HF_HUB_OFFLINE", None)
    if endpoint:
        env["HF_ENDPOINT"] = endpoint
    proc = subprocess.run([_python_with_hub(python), "-c", _FETCH_SCRIPT, json.dumps(args)],
                          capture_output=True, text=True, env=env)
    where = f"{source.dataset}@{source.revision}"
    try:
        out = json.loads(proc.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise InputError(Diagnostic(where, 0, 0, f"download failed: {tail}",
                                    "is the Hub (or HF_ENDPOINT) reachable, and the cache "
                                    "directory writable?", "trace-fetch")) from None
    error = out.get("error")
    if error == "revision":
        raise InputError(Diagnostic(where, 0, 0, f"the dataset has no revision "
                                                 f"'{source.revision}'",
                                    "the pin in configs/runtimes.yaml names a revision the Hub "
                                    "does not have; pin one it has", "trace-fetch"))
    if error == "dataset":
        raise InputError(Diagnostic(where, 0, 0, "no such dataset on the Hub",
                                    "check the alias's dataset in configs/runtimes.yaml",
                                    "trace-fetch"))
    if error == "changed":
        raise InputError(Diagnostic(where, 0, 0, f"'{source.revision}' now resolves to "
                                                 f"{out['sha']}, not the pinned {source.commit}",
                                    "the dataset changed; review it and update the pin's commit",
                                    "trace-fetch"))
    if error:
        raise InputError(Diagnostic(where, 0, 0, f"cannot reach the Hub: {out.get('detail')}",
                                    "check the network or HF_ENDPOINT", "trace-fetch"))
    return Fetched(source, Path(out["path"]), out["sha"])
