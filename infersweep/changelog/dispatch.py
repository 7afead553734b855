"""The sweep matrix of a manual run (run-sweep.yml's ``workflow_dispatch``): rows selected
like ``matrix test-config`` (config keys or globs, sequence lengths, concurrencies), bucketed
and sharded exactly like a changelog's matrix, so the same benchmark jobs run them."""

from __future__ import annotations

from dataclasses import replace

from infersweep.changelog import buckets
from infersweep.diagnostics import Diagnostic, InputError
from infersweep.matrix.generate import Selection, keyed_rows
from infersweep.matrix.rows import normalise

EVAL_MODES = ("none", "default", "evals-only", "all-evals")


def _check_points(catalog, sel: Selection) -> None:
    """A seq-lens or conc input that none of the keys has is named, with the valid values."""
    from infersweep.matrix import points
    from infersweep.matrix.generate import select_keys

    problems = [Diagnostic("--dispatch", 0, 0, f"seq-lens: '{s}' is not a sequence family",
                           points.SEQ_FORM, "dispatch")
                for s in sel.seq_lens or [] if not points.is_seq_family(s)]
    if problems:
        raise InputError(problems)
    keys = select_keys(catalog, sel.config_keys)
    found = points.unmatched(catalog, sel)
    if found:
        raise InputError([Diagnostic("--dispatch", 0, 0, f"{option.lstrip('-')}: "
                                     + points.describe(option, bad, have, keys[:6]),
                                     rule="dispatch")
                          for option, bad, have in found])


def dispatch_matrix(catalog, *, config_keys: list[str], seq_lens: list[str],
                    conc: list[int], eval_mode: str) -> dict:
    if eval_mode not in EVAL_MODES:
        raise InputError(Diagnostic("--eval-mode", 0, 0, f"unknown eval mode '{eval_mode}'",
                                    f"one of {', '.join(EVAL_MODES)}", "dispatch"))
    base = Selection(config_keys=list(config_keys), seq_lens=list(seq_lens) or None,
                     conc=list(conc) or None, include_label_in_node_filter=True)
    _check_points(catalog, base)
    throughput: list[dict] = []
    if eval_mode not in ("evals-only", "all-evals"):
        throughput = keyed_rows(catalog, replace(base, evals="none"))
    evals = []
    if eval_mode != "none":
        evals = keyed_rows(catalog, replace(base, evals="only",
                                          all_evals=eval_mode == "all-evals"))
    if not throughput and not evals:
        raise InputError(Diagnostic(" ".join(config_keys), 0, 0, "the selection has no rows",
                                    "check it with `infersweep matrix test-config --format "
                                    "table`", "dispatch"))
    throughput = [normalise(r) for r in throughput]
    for row in throughput:
        row["recipe-fingerprint"] = buckets.recipe_fingerprint(row)
    metadata = {"dispatch": {"config-keys": list(config_keys), "seq-lens": list(seq_lens),
                             "conc": list(conc), "eval-mode": eval_mode}}
    return buckets.build(throughput, [normalise(r) for r in evals], metadata)
