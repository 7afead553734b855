"""Which matrix rows also run an accuracy eval (GSM8K), following InferenceX's selection.

Marking works on the whole set of rows generated together, like InferenceX: single-node
groups span config keys that share model, runner, framework, precision, sequence lengths,
speculative decoding and dp-attn.
"""

from __future__ import annotations

import json

from infersweep.matrix.rows import concs

MIN_EVAL_CONC = 16
EVAL_SEQ = (8192, 1024)
_TOPOLOGY_IGNORES = {"conc", "run-eval", "eval-only", "eval-conc", "eval-all-concs", "exp-name"}


def _is_agentic(row: dict) -> bool:
    return row.get("scenario-type") == "agentic-coding"


def _is_multi(row: dict) -> bool:
    return row.get("prefill") is not None


def _is_eval_seq(row: dict) -> bool:
    return (row.get("isl"), row.get("osl")) == EVAL_SEQ


def _topology(row: dict) -> str:
    return json.dumps({k: v for k, v in row.items() if k not in _TOPOLOGY_IGNORES},
                      sort_keys=True)


def mark(rows: list[dict], *, include_agentic: bool) -> None:
    """Set ``run-eval`` on every row (and ``eval-conc`` on selected multi-node rows)."""
    selected: set[int] = set()
    eval_conc: dict[int, int] = {}

    single: dict[tuple, list[int]] = {}
    multi: dict[str, list[int]] = {}
    ag_single: dict[tuple, list[int]] = {}
    ag_multi: dict[str, list[int]] = {}
    for i, row in enumerate(rows):
        if _is_agentic(row):
            if not include_agentic:
                continue
            if _is_multi(row):
                ag_multi.setdefault(_topology(row), []).append(i)
            else:
                key = (row["model"], row["runner"], row["framework"], row["precision"])
                ag_single.setdefault(key, []).append(i)
        elif _is_eval_seq(row):
            if _is_multi(row):
                multi.setdefault(_topology(row), []).append(i)
            elif any(c >= MIN_EVAL_CONC for c in concs(row)):
                key = (row["model"], row["runner"], row["framework"], row["precision"],
                       row["isl"], row["osl"], row["spec-decoding"], row["dp-attn"])
                single.setdefault(key, []).append(i)

    for members in single.values():
        values = sorted({c for i in members for c in concs(rows[i]) if c >= MIN_EVAL_CONC})
        targets = {values[-1], values[len(values) // 2]}
        selected.update(i for i in members if set(concs(rows[i])) & targets)

    def highest(members: list[int], floor: int) -> None:
        best, best_i = None, None
        for i in members:
            eligible = [c for c in concs(rows[i]) if c >= floor]
            if eligible and (best is None or max(eligible) > best):
                best, best_i = max(eligible), i
        if best_i is not None:
            selected.add(best_i)
            eval_conc[best_i] = best

    for members in multi.values():
        highest(members, MIN_EVAL_CONC)
    for members in ag_multi.values():
        highest(members, MIN_EVAL_CONC)
    for members in ag_single.values():
        best_i = max(members, key=lambda i: max(concs(rows[i])))
        selected.add(best_i)

    for i, row in enumerate(rows):
        row["run-eval"] = i in selected
        if i in eval_conc:
            row["eval-conc"] = eval_conc[i]


def mark_all(rows: list[dict]) -> list[tuple[int, dict]]:
    """Every eligible row evaluates; multi-node rows of one topology merge into one row.

    Fixed-sequence multi-node rows evaluate every concurrency of the merged curve
    (``eval-all-concs``); agentic ones only its highest (``eval-conc``), as SWE-bench runs
    one concurrency. Returns (index of the source row, row) pairs so callers can keep
    per-row context.
    """
    out: list[tuple[int, dict]] = []
    merged: dict[str, dict] = {}
    for index, row in enumerate(rows):
        agentic = _is_agentic(row)
        if not agentic and not _is_eval_seq(row):
            out.append((index, row))  # never evaluated; dropped by the eval-only filter
            continue
        if not _is_multi(row):
            row["run-eval"] = True
            out.append((index, row))
            continue
        key = _topology(row)
        target = merged.get(key)
        if target is not None:
            target["conc"] = sorted(set(target["conc"]) | set(row["conc"]))
            if agentic:
                target["eval-conc"] = max(target["conc"])
            continue
        row = {k: v for k, v in row.items() if k != "eval-conc"}
        row["conc"] = sorted(set(row["conc"]))
        row["run-eval"] = True
        if agentic:
            row["eval-conc"] = max(row["conc"])
        else:
            row["eval-all-concs"] = True
        merged[key] = row
        out.append((index, row))
    return out
