"""Keeping every sweep inside GitHub's limits: rows travel as ids, in shards.

GitHub expands a matrix to at most 256 jobs and keeps at most 1 MB of outputs per job
(50 MB per run), sizes counted as UTF-16. A changelog entry can name hundreds of configs
(``config-keys: ["*"]`` on InferenceX's catalogs gives about 2,500 rows and 3 MB of row
JSON), so run-sweep never passes rows through job outputs: the setup job writes the whole
matrix to a rows file (uploaded as an artifact), its outputs carry only a small entry per
row (id, runner, title), split into shards of at most 256, one fan-out job per shard slot,
and each benchmark job reads its row from the file by id (``changelog row``).

A shard holds rows of one run-sweep bucket only, so fail-fast and job names stay per
family. :data:`SLOTS` is the number of shard jobs run-sweep.yml has per benchmark
template (a test keeps the two equal); a run that needs more is refused before anything
is written.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from infersweep.diagnostics import Diagnostic, InputError
from infersweep.matrix.rows import seq_name

MATRIX_LIMIT = 256  # jobs one matrix may expand to
JOB_OUTPUTS_LIMIT = 1_000_000  # bytes (UTF-16) of all outputs of one job
ROWS_FORMAT = 1
NOT_RUN = "not-run"  # rows file: rows the sweep asked for that no job can launch, and why

# template -> (job outputs routed to it, in slot order; number of shard jobs in run-sweep.yml)
# Agentic-coding rows get shard jobs of their own, as InferenceX's sweep-agentic and
# sweep-multi-node-agentic: hour-long replays whose artifacts are the agentic pair
# (bmk_agentic_<id>, agentic_<id>), never in a shard of fixed-seq-len rows
TEMPLATES = {
    "single": (("single-node", "evals"), 10),
    "multi": (("multi-node", "multinode-evals"), 10),
    "agentic": (("single-node-agentic", "agentic-evals"), 3),
    "multi-agentic": (("multi-node-agentic", "multinode-agentic-evals"), 3),
}
SHARD_KINDS = {"single": "single-node", "multi": "multi-node", "agentic": "agentic",
               "multi-agentic": "multi-node agentic"}  # what a template's shards hold
SLOTS = {template: count for template, (_, count) in TEMPLATES.items()}
CANARIES = ("canary-single-node", "canary-multi-node")
# template -> the reusable workflow its shard jobs and its canary call in run-sweep.yml (a
# test keeps the two equal): single-node rows as InferenceX's benchmark-tmpl.yml does them,
# multi-node rows as its benchmark-multinode-tmpl.yml; the steps are benchmark.yml's in both
WORKFLOWS = {"single": "benchmark-single-node.yml", "multi": "benchmark.yml",
             "agentic": "benchmark-single-node.yml", "multi-agentic": "benchmark.yml"}


def slot_names(template: str) -> list[str]:
    return [f"{template}-{i}" for i in range(1, SLOTS[template] + 1)]


def output_names() -> list[str]:
    """Every output the setup job exports (one per shard slot and canary)."""
    return [*(name for template in TEMPLATES for name in slot_names(template)), *CANARIES]


CONC_LISTED = 8  # a single-node title lists up to this many concurrencies, else a range


def _concs(conc) -> list:
    return list(conc) if isinstance(conc, list) else [] if conc is None else [conc]


def title(row: dict) -> str:
    """A short job title: what the row runs, readable in the run's job list.

    Multi-node: exp-name, framework, workers, speculative decoding, the concurrency range
    (``dsv4_8k1k atom-disagg 1P1D c8-128 eval``). Single-node: model, framework, TP, EP, DPA,
    speculative decoding, sequence lengths and the concurrencies the job's one server runs
    (``dsv4 atom tp8 dpa 8k1k c64,128``; a long list as its range and count)."""
    if row.get("prefill") is not None:
        return _multi_title(row)
    return _single_title(row)


def _eval_part(row: dict) -> list[str]:
    return ["eval"] if row.get("eval-only") or row.get("run-eval") else []


def _spec_part(row: dict) -> list[str]:
    return [str(row["spec-decoding"])] if row.get("spec-decoding") not in (None, "none") else []


def _multi_title(row: dict) -> str:
    conc = _concs(row.get("conc"))
    points = f"c{min(conc)}-{max(conc)}" if len(conc) > 1 else f"c{conc[0]}" if conc else ""
    parts = [str(row.get("exp-name", "")), str(row.get("framework", "")),
             f"{row['prefill'].get('num-worker')}P{row['decode'].get('num-worker')}D",
             *_spec_part(row), points, *_eval_part(row)]
    return " ".join(p for p in parts if p)


def _single_title(row: dict) -> str:
    conc = sorted(_concs(row.get("conc")))
    if len(conc) > CONC_LISTED:
        points = f"c{conc[0]}-{conc[-1]} ({len(conc)})"
    else:
        points = "c" + ",".join(str(c) for c in conc) if conc else ""
    if row.get("scenario-type") == "agentic-coding":
        seq = "agentic"
    elif row.get("isl") is not None and row.get("osl") is not None:
        seq = seq_name(row["isl"], row["osl"])
    else:
        seq = ""
    parts = [str(row.get("model-prefix") or row.get("exp-name") or ""),
             str(row.get("framework", "")), f"tp{row.get('tp')}",
             f"ep{row['ep']}" if row.get("ep") not in (None, 1) else "",
             "dpa" if row.get("dp-attn") else "", *_spec_part(row), seq, points,
             *_eval_part(row)]
    return " ".join(p for p in parts if p)


@dataclass
class Plan:
    rows: dict[str, dict]  # row id -> row (the rows file)
    outputs: dict[str, str]  # setup job output name -> value
    counts: dict[str, tuple[int, int]]  # job output -> (rows, shards)
    not_run: dict[str, dict] = field(default_factory=dict)  # id -> {"row", "reason"}

    def rows_document(self) -> str:
        doc = {"format": ROWS_FORMAT, "rows": self.rows}
        if self.not_run:
            doc[NOT_RUN] = self.not_run
        return json.dumps(doc, separators=(",", ":")) + "\n"


def _entry(row_id: str, row: dict, timeout_of) -> dict:
    entry = {"id": row_id, "runner": row["runner"], "title": title(row)}
    if timeout_of is not None:
        entry["timeout-minutes"] = timeout_of(row)
    return entry


def _refuse(message: str, hint: str) -> InputError:
    return InputError(Diagnostic("<sweep>", 0, 0, message, hint, "github-limits"))


def utf16_size(text: str) -> int:
    return len(text.encode("utf-16-le"))


def plan(job_rows: dict[str, list[dict]], *, timeout_of=None,
         not_run: list[tuple[str, dict, str]] = ()) -> Plan:
    """Ids, shards and setup-job outputs for the rows of every run-sweep job output.

    ``timeout_of(row)`` gives each entry its job's ``timeout-minutes``; ``not_run`` lists
    (job output, row, reason) of rows no job launches, kept in the rows file by id."""
    rows: dict[str, dict] = {}
    outputs: dict[str, str] = {}
    counts: dict[str, tuple[int, int]] = {}
    compact = {"separators": (",", ":")}
    for name in CANARIES:
        entries = []
        for i, row in enumerate(job_rows.get(name, [])):
            rows[f"{name}-{i + 1}"] = row
            entries.append(_entry(f"{name}-{i + 1}", row, timeout_of))
        outputs[name] = json.dumps(entries, **compact)
        counts[name] = (len(entries), 1 if entries else 0)
    for template, (names, n_slots) in TEMPLATES.items():
        shards: list[list[dict]] = []
        for name in names:
            bucket = job_rows.get(name, [])
            ids = []
            for i, row in enumerate(bucket):
                row_id = f"{name}-{i + 1}"
                rows[row_id] = row
                ids.append(_entry(row_id, row, timeout_of))
            chunks = [ids[k:k + MATRIX_LIMIT] for k in range(0, len(ids), MATRIX_LIMIT)]
            counts[name] = (len(bucket), len(chunks))
            shards.extend(chunks)
        if len(shards) > n_slots:
            n_rows = sum(counts[name][0] for name in names)
            kind = SHARD_KINDS[template]
            raise _refuse(
                f"the sweep needs {len(shards)} {kind} shards of at most "
                f"{MATRIX_LIMIT} jobs ({n_rows} rows), but run-sweep.yml has {n_slots} "
                f"{kind} shard jobs", "split the change into several pull requests, "
                "or name fewer config-keys (a PR label such as sweep-enabled also runs "
                "fewer points)")
        for i, slot in enumerate(slot_names(template)):
            outputs[slot] = json.dumps(shards[i] if i < len(shards) else [], **compact)
    size = sum(utf16_size(k) + utf16_size(v) for k, v in outputs.items())
    if size > JOB_OUTPUTS_LIMIT:
        raise _refuse(f"the sweep's job list is {size / 1e6:.2f} MB of setup-job outputs; "
                      f"GitHub keeps at most {JOB_OUTPUTS_LIMIT / 1e6:.0f} MB per job",
                      "split the change into several pull requests, or name fewer "
                      "config-keys")
    skipped = {}
    for name, row, reason in not_run:
        n = sum(1 for k in skipped if k.startswith(f"not-run-{name}-")) + 1
        skipped[f"not-run-{name}-{n}"] = {"row": row, "reason": reason}
    return Plan(rows, outputs, counts, skipped)


def read_row(path: str, row_id: str) -> dict:
    """The row ``row_id`` of a rows file written by ``changelog matrix --rows-out``."""
    from infersweep.diagnostics import did_you_mean

    try:
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
    except FileNotFoundError:
        raise InputError(Diagnostic(path, 0, 0, "rows file not found",
                                    "download the sweep's rows artifact first", "io")) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(Diagnostic(path, 0, 0, f"cannot read the rows file: {exc}",
                                    rule="io")) from None
    except json.JSONDecodeError as exc:
        raise InputError(Diagnostic(path, exc.lineno, exc.colno, f"not JSON: {exc.msg}",
                                    "use the file `changelog matrix --rows-out` wrote",
                                    "rows-file")) from None
    if not isinstance(doc, dict) or doc.get("format") != ROWS_FORMAT \
            or not isinstance(doc.get("rows"), dict):
        raise InputError(Diagnostic(path, 0, 0, "not a rows file (format "
                                    f"{ROWS_FORMAT} with a 'rows' object expected)",
                                    "use the file `changelog matrix --rows-out` wrote",
                                    "rows-file"))
    row = doc["rows"].get(row_id)
    if not isinstance(row, dict):
        raise InputError(Diagnostic(path, 0, 0, f"no row with id '{row_id}' "
                                    f"({len(doc['rows'])} rows in the file)",
                                    did_you_mean(row_id, doc["rows"]) or
                                    "ids are '<job>-<n>', e.g. single-node-1", "rows-file"))
    return row
