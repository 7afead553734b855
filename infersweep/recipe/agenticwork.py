"""The workload half of an agentic-coding recipe: the replay of each concurrency.

An agentic row owns its concurrencies and its window (``duration``, 3,600 s); the traces,
the warm-up and the client's flags follow InferenceX's replay (``infersweep.agentic.replaycmd``).
The benchmark step runs ``infersweep agentic replay`` once per concurrency, written out in
full so a reader (and ``recipe diff``) sees every point; each writes
``<name>-c<conc>.agentic.json`` beside the client's exports. The row travels in the command
(``--row-json``) because the result is built on the benchmark node from the row's identity.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass, field, replace

from infersweep.recipe.workload import BASE_URL, Point, eval_step

DEFAULT_RESULT_DIR = "/logs/agentic"
RESULT_SUFFIX = ".agentic.json"
FULL_DURATION_S = 3600


@dataclass(frozen=True)
class AgenticWorkload:
    model: str
    concs: tuple[int, ...]
    row: dict = field(compare=False, hash=False)
    duration: int = FULL_DURATION_S
    scale_down: float = 1.0
    # what fixed-sequence code reads of a workload; an agentic one has none of it
    isl: None = None
    osl: None = None
    range_ratio: None = None
    eval_conc: int | None = None  # a row marked run-eval: GSM8K after the replays (opt-in)
    agentic: bool = True

    def points(self, name: str) -> list[Point]:
        return [Point(c, 0, 0, f"{name}-c{c}{RESULT_SUFFIX}") for c in self.concs]

    def with_concs(self, concs) -> AgenticWorkload:
        return replace(self, concs=tuple(concs))

    def scaled(self, factor: float) -> AgenticWorkload:
        return replace(self, scale_down=factor)


def is_agentic(row: dict) -> bool:
    return row.get("scenario-type") == "agentic-coding"


def from_row(row: dict) -> AgenticWorkload:
    conc = row["conc"]
    concs = tuple(conc) if isinstance(conc, list) else (conc,)
    eval_conc = (row.get("eval-conc") or max(concs)) if row.get("run-eval") else None
    return AgenticWorkload(model=row["model"], concs=concs, row=row,
                           duration=int(row.get("duration") or FULL_DURATION_S),
                           eval_conc=eval_conc)


def _row_at(row: dict, conc: int) -> dict:
    """The row as one point sees it (its own concurrency; single-node rows carry one)."""
    return {**row, "conc": [conc] if isinstance(row.get("conc"), list) else conc}


def command(w: AgenticWorkload, name: str, *, client: str = "infersweep",
            result_dir: str = DEFAULT_RESULT_DIR) -> str:
    """Every concurrency in turn; a failed point does not stop the rest but fails the step."""
    if client.split()[-1:] and client.split()[-1].endswith(".pyz"):
        client = "infersweep"  # the one-file client has no replay: the node's infersweep does
    lines = ["set -uo pipefail", f"mkdir -p {shlex.quote(result_dir)}", "rc=0"]
    for c in w.concs:
        row = json.dumps(_row_at(w.row, c), separators=(",", ":"), sort_keys=True)
        parts = [f"{client} agentic replay", f"--conc {c}", f'--url "{BASE_URL}"',
                 f"--name {shlex.quote(name)}", f"--result-dir {shlex.quote(result_dir)}"]
        if w.scale_down != 1:
            parts.append(f"--scale-down {w.scale_down:g}")
        parts.append(f"--row-json {shlex.quote(row)}")
        lines.append(" \\\n  ".join(parts) + " || rc=1")
    if w.eval_conc is not None:  # InferenceX's opt-in agentic eval: GSM8K on the same server
        lines += eval_step(w, client, result_dir)
    lines.append('exit "$rc"')
    return "\n".join(lines) + "\n"
