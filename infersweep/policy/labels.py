"""Every pull-request label the sweep understands: the only place label names are written.

Other modules, the docs generator and tests import these constants; workflows never spell a
label themselves but consume the decision that :mod:`infersweep.policy.decide` derives.

Three kinds of label:

* **primary** labels choose how much of the changelog matrix runs (exactly one may be set);
* **modifiers** adjust a sweep that a primary label enables (alone they do nothing);
* **scheduling** labels only feed the priority scheduler; adding or removing one never
  restarts a sweep that is already running.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Mode(StrEnum):
    """How much of the changelog matrix a sweep runs."""

    TRIMMED = "trimmed"  # each configuration at its lowest concurrency only
    FULL = "full"  # every requested point
    NONE = "none"  # nothing runs


@dataclass(frozen=True)
class Primary:
    """What one primary label turns on."""

    name: str
    mode: Mode
    canary: bool
    fail_fast: bool
    stageable: bool  # results may be staged / reused after merge
    summary: str


# -- primary labels ------------------------------------------------------------------------
SWEEP_ENABLED = "sweep-enabled"
FULL_SWEEP_FAIL_FAST = "full-sweep-fail-fast"
FULL_SWEEP_ENABLED = "full-sweep-enabled"
FULL_SWEEP_FAIL_FAST_NO_CANARY = "full-sweep-fail-fast-no-canary"
NON_CANARY_FULL_SWEEP_ENABLED = "non-canary-full-sweep-enabled"

#: The recommended primary label: full matrix, a canary first, stop a family on first failure.
RECOMMENDED_PRIMARY = FULL_SWEEP_FAIL_FAST

PRIMARIES: dict[str, Primary] = {
    p.name: p
    for p in (
        Primary(FULL_SWEEP_FAIL_FAST, Mode.FULL, canary=True, fail_fast=True, stageable=True,
                summary="full matrix, canary first, fail fast (recommended)"),
        Primary(FULL_SWEEP_ENABLED, Mode.FULL, canary=True, fail_fast=False, stageable=True,
                summary="full matrix, canary first, keep going past failures"),
        Primary(FULL_SWEEP_FAIL_FAST_NO_CANARY, Mode.FULL, canary=False, fail_fast=True,
                stageable=True, summary="full matrix, no canary, fail fast"),
        Primary(NON_CANARY_FULL_SWEEP_ENABLED, Mode.FULL, canary=False, fail_fast=False,
                stageable=True, summary="full matrix, no canary, keep going past failures"),
        Primary(SWEEP_ENABLED, Mode.TRIMMED, canary=False, fail_fast=False, stageable=False,
                summary="smoke test: every configuration at its lowest concurrency"),
    )
}
PRIMARY_LABELS: tuple[str, ...] = tuple(PRIMARIES)

# -- modifiers -----------------------------------------------------------------------------
ALL_EVALS = "all-evals"
EVALS_ONLY = "evals-only"
AGENTX_FAST = "agentx-fast"

MODIFIER_LABELS: tuple[str, ...] = (ALL_EVALS, EVALS_ONLY, AGENTX_FAST)

#: Modifiers whose results must not be staged or reused: they measure something else than the
#: sweep asks for (agentx-fast, a shorter agentic profile). evals-only runs the requested evals
#: themselves, gated and staged like any other; it only leaves the throughput out.
NOT_STAGEABLE_MODIFIERS: frozenset[str] = frozenset({AGENTX_FAST})

MODIFIER_SUMMARIES: dict[str, str] = {
    ALL_EVALS: "run the accuracy eval on every fixed-seq-len configuration (still stageable)",
    EVALS_ONLY: "run only the accuracy evals, no throughput (still stageable: the evals)",
    AGENTX_FAST: "faster agentic profile for agentic throughput jobs (not stageable)",
}

# -- scheduling-only labels ------------------------------------------------------------------
SKIP_QUEUE = "skip_queue"
CI_PATCHWORK = "ci-patchwork"
ENGINE_PATCH = "engine-patch"
CI_PATCHWORK_WAIVED = "ci-patchwork-waived"
CI_CHECKLIST_COMPLETE = "ci-checklist-complete"

SCHEDULING_LABELS: tuple[str, ...] = (
    SKIP_QUEUE, CI_PATCHWORK, ENGINE_PATCH, CI_PATCHWORK_WAIVED, CI_CHECKLIST_COMPLETE,
)

SCHEDULING_SUMMARIES: dict[str, str] = {
    SKIP_QUEUE: "jump the runner queue (priority scheduler)",
    CI_PATCHWORK: "patched engine or workflow: lowest scheduling priority",
    ENGINE_PATCH: "patched engine: lowest scheduling priority",
    CI_PATCHWORK_WAIVED: "waives the patchwork penalty",
    CI_CHECKLIST_COMPLETE: "review checklist complete: small priority bonus",
}

#: Labels whose addition or removal changes what a sweep computes (so it restarts the sweep).
SWEEP_LABELS: frozenset[str] = frozenset(PRIMARY_LABELS) | frozenset(MODIFIER_LABELS)

#: Every label the sweep tooling recognises.
RECOGNIZED_LABELS: frozenset[str] = SWEEP_LABELS | frozenset(SCHEDULING_LABELS)

# -- commit-message marker -------------------------------------------------------------------
#: In a PR head commit message, skips the PR sweep (ignored on pushes to the default branch).
SKIP_SWEEP_MARKER = "[skip-sweep]"


def kind(label: str) -> str:
    """'primary', 'modifier', 'scheduling' or 'unrelated'."""
    if label in PRIMARIES:
        return "primary"
    if label in MODIFIER_LABELS:
        return "modifier"
    if label in SCHEDULING_LABELS:
        return "scheduling"
    return "unrelated"


def label_table() -> list[dict[str, str]]:
    """One row per recognised label, for docs and ``infersweep policy labels``."""
    rows = []
    for p in PRIMARIES.values():
        rows.append({"label": p.name, "kind": "primary", "matrix": p.mode.value,
                     "canary": "yes" if p.canary else "no",
                     "fail-fast": "yes" if p.fail_fast else "no",
                     "stageable": "yes" if p.stageable else "no", "effect": p.summary})
    for name in MODIFIER_LABELS:
        rows.append({"label": name, "kind": "modifier", "matrix": "", "canary": "",
                     "fail-fast": "",
                     "stageable": "no" if name in NOT_STAGEABLE_MODIFIERS else "unchanged",
                     "effect": MODIFIER_SUMMARIES[name]})
    for name in SCHEDULING_LABELS:
        rows.append({"label": name, "kind": "scheduling", "matrix": "", "canary": "",
                     "fail-fast": "", "stageable": "unchanged",
                     "effect": SCHEDULING_SUMMARIES[name]})
    return rows
