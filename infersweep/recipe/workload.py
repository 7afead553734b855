"""The workload half of a recipe, taken from a matrix row: points and the client command.

The row owns concurrencies, ISL/OSL and the range ratio; the prompt and warm-up counts per
point follow InferenceX's fixed-seq-len rules (10 x conc measured requests, 2 x conc warm-ups,
closed loop at ``--max-concurrency conc``). The command runs ``infersweep bench serve`` once
per point, written out in full: no loop, so a reader (and ``recipe diff``) sees every point.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, replace

PROMPTS_PER_CONC = 10
WARMUPS_PER_CONC = 2
# InferenceX's benchmark workflows pass random-range-ratio 0.8 unless a row says otherwise.
DEFAULT_RANGE_RATIO = 0.8
RANGE_RATIO_FIELD = "random-range-ratio"
PERCENTILE_METRICS = "ttft,tpot,itl,e2el"
DEFAULT_CLIENT = "infersweep"
BUNDLE_SUFFIX = ".pyz"  # the one-file client (`infersweep bench bundle`): `python3 X.pyz serve`
DEFAULT_RESULT_DIR = "/logs/fixed-seq"
EVAL_SUBDIR = "eval"  # the eval's output, beside the point results
BASE_URL = "http://${SRT_FRONTEND_HOST}:${SRT_FRONTEND_PORT}"


@dataclass(frozen=True)
class Point:
    conc: int
    num_prompts: int
    num_warmups: int
    result_file: str  # file name inside the result directory


@dataclass(frozen=True)
class Workload:
    model: str
    isl: int
    osl: int
    range_ratio: float
    concs: tuple[int, ...]
    prompts_per_conc: int = PROMPTS_PER_CONC
    warmups_per_conc: int = WARMUPS_PER_CONC
    eval_conc: int | None = None  # a row marked run-eval: the GSM8K eval's concurrency
    eval_only: bool = False  # an eval-only row: no throughput points, the eval is the job

    def points(self, name: str) -> list[Point]:
        return [Point(c, c * self.prompts_per_conc, c * self.warmups_per_conc,
                      f"{name}-c{c}.json") for c in self.concs]

    def with_concs(self, concs) -> Workload:
        return replace(self, concs=tuple(concs))


def from_row(row: dict) -> Workload:
    """The workload of a fixed-seq-len matrix row (already schema-checked). An eval-only row
    (``evals-only``, ``all-evals``) has no points: its concurrencies only say which server
    the eval meets and, without an ``eval-conc``, the eval's concurrency (the highest)."""
    conc = row["conc"]
    concs = tuple(conc) if isinstance(conc, list) else (conc,)
    ratio = row.get(RANGE_RATIO_FIELD, DEFAULT_RANGE_RATIO)
    eval_only = bool(row.get("eval-only"))
    eval_conc = (row.get("eval-conc") or max(concs)) if row.get("run-eval") or eval_only else None
    return Workload(model=row["model"], isl=row["isl"], osl=row["osl"],
                    range_ratio=float(ratio), concs=() if eval_only else concs,
                    eval_conc=eval_conc, eval_only=eval_only)


def _fmt(value: float) -> str:
    return f"{value:g}"


def client_args(w: Workload, point: Point, result_dir: str) -> list[str]:
    """The `bench serve` arguments of one point (before shell quoting)."""
    return [
        "--backend", "openai",
        "--base-url", BASE_URL,
        "--endpoint", "/v1/completions",
        "--model", w.model,
        "--tokenizer", w.model,
        "--trust-remote-code",
        "--dataset-name", "random",
        "--random-input-len", str(w.isl),
        "--random-output-len", str(w.osl),
        "--random-range-ratio", _fmt(w.range_ratio),
        "--num-warmups", str(point.num_warmups),
        "--num-prompts", str(point.num_prompts),
        "--max-concurrency", str(point.conc),
        "--request-rate", "inf",
        "--ignore-eos",
        "--percentile-metrics", PERCENTILE_METRICS,
        "--save-result",
        "--result-dir", result_dir,
        "--result-filename", point.result_file,
    ]


def _quote(arg: str) -> str:
    if arg == BASE_URL:
        return f'"{arg}"'  # expanded by the job's shell
    return shlex.quote(arg)


def serve_command(client: str) -> str:
    """How ``client`` runs the benchmark: ``CLIENT bench serve`` for infersweep itself
    (``infersweep``, ``python3 -m infersweep``), ``CLIENT serve`` for the bundle, whose command
    ends with its ``.pyz`` file (``python3 /path/infersweep-bench.pyz``)."""
    words = shlex.split(client)
    return f"{client} serve" if words and words[-1].endswith(BUNDLE_SUFFIX) else f"{client} bench serve"


def command(w: Workload, name: str, *, client: str = DEFAULT_CLIENT,
            result_dir: str = DEFAULT_RESULT_DIR) -> str:
    """The custom benchmark command: every point in turn; a failed point does not stop the rest,
    but makes the step (and so the Slurm job) exit non-zero."""
    lines = ["set -uo pipefail", f"mkdir -p {shlex.quote(result_dir)}", "rc=0"]
    for point in w.points(name):
        args = client_args(w, point, result_dir)
        parts = [serve_command(client)]
        i = 0
        while i < len(args):
            if i + 1 < len(args) and not args[i + 1].startswith("--"):
                parts.append(f"{args[i]} {_quote(args[i + 1])}")
                i += 2
            else:
                parts.append(args[i])
                i += 1
        lines.append(" \\\n  ".join(parts) + " || rc=1")
    if w.eval_conc is not None:
        lines += eval_step(w, client, result_dir)
    lines.append('exit "$rc"')
    return "\n".join(lines) + "\n"


def eval_step(w: Workload, client: str, result_dir: str) -> list[str]:
    """The GSM8K eval after the throughput points, against the same front end, into
    ``<result dir>/eval``. The bundled client has no evals (lm-eval is not in it), so with the
    bundle the step runs ``infersweep`` (installed with its ``eval`` extra in the image).
    ``$INFERSWEEP_EVAL_ARGS`` adds options where the job sets it (local data files, the row).
    After throughput points the eval's exit does not fail the job: the points stand either way;
    in an eval-only job the eval is all there is, and its exit is the job's."""
    words = shlex.split(client)
    evals = DEFAULT_CLIENT if words and words[-1].endswith(BUNDLE_SUFFIX) else client
    parts = [f"{evals} eval gsm8k", f'--base-url "{BASE_URL}"', f"--model {shlex.quote(w.model)}",
             f"--concurrency {w.eval_conc}",
             f"--output-dir {shlex.quote(result_dir.rstrip('/') + '/' + EVAL_SUBDIR)}",
             "${INFERSWEEP_EVAL_ARGS:-}"]
    if getattr(w, "eval_only", False):  # an agentic workload has points always
        return ["# GSM8K eval (an eval-only row): `eval check` judges its scores",
                " \\\n  ".join(parts) + " || rc=1"]
    return ["# GSM8K eval (the row is marked run-eval): `eval check` judges it, not this exit",
            " \\\n  ".join(parts) + ' || echo "eval gsm8k exited $?" >&2']
