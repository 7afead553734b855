"""Which questions an eval asked: the plan recorded at run time, and the doc ids it implies.

lm-eval numbers a task's test documents 0..N-1 in the split's order and, with ``--limit L``,
asks the first L of them. ``eval gsm8k`` records that selection (``plan``), the split it was
taken from (``dataset``: its size and content digest, and where it was read) and the digest
of the targets it scored against (``targets-sha256``). From the split's file and the plan
alone, ``eval check`` derives the doc ids an eval must have one sample each for.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from infersweep.diagnostics import Diagnostic, InputError

SELECTION = "first"  # the first `limit` documents (lm-eval's --limit)
_SHA256 = re.compile(r"[0-9a-f]{64}")
_REDO = "written by an infersweep before eval-version 2, or edited: run `eval gsm8k` again"


@dataclass(frozen=True)
class Plan:
    rows: int                    # rows of the test split, as recorded
    limit: int | None            # --limit, or None for the whole split
    questions: int               # questions asked, as recorded
    dataset_sha256: str
    targets_sha256: str
    test_file: str | None        # the local test file read at run time (None: the hub)
    offset: int = 0

    def doc_ids(self, rows: int) -> range:
        """The doc ids this plan asks of a split of ``rows`` rows."""
        end = rows if self.limit is None else min(rows, self.offset + self.limit)
        return range(min(self.offset, rows), end)

    def describe(self, rows: int) -> str:
        n = len(self.doc_ids(rows))
        if n == rows:
            return f"all {rows:,} questions"
        return f"the first {n:,} of {rows:,} questions (--limit {self.limit})"


def record(rows: int, limit: int | None, dataset_sha256: str, test_file: str | None,
           targets_sha256: str) -> dict:
    """The ``dataset``, ``plan`` and ``targets-sha256`` fields of ``eval.json``."""
    questions = rows if limit is None else min(rows, limit)
    return {"dataset": {"source": "hub" if test_file is None else "local",
                        "test-file": test_file, "rows": rows, "sha256": dataset_sha256},
            "plan": {"selection": SELECTION, "offset": 0, "limit": limit,
                     "questions": questions},
            "targets-sha256": targets_sha256}


def _count(v, least: int) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= least


def from_summary(data: dict, path: str) -> Plan:
    """The plan of a loaded ``eval.json``; ``[eval-plan]`` when it has none or a broken one."""
    def broken(what: str) -> InputError:
        return InputError(Diagnostic(path, 1, 1, what, _REDO, "eval-plan"))

    version = data.get("eval-version")
    if not _count(version, 2):
        raise broken(f"eval-version {version!r} records no question plan (which questions were "
                     "asked, the test split's digest, the targets' digest)")
    plan, ds, targets = data.get("plan"), data.get("dataset"), data.get("targets-sha256")
    if not isinstance(plan, dict) or not isinstance(ds, dict):
        raise broken("no 'plan' and 'dataset' records: which questions were asked is unknown")
    if plan.get("selection") != SELECTION or not _count(plan.get("offset"), 0):
        raise broken(f"plan selection {plan.get('selection')!r} from offset "
                     f"{plan.get('offset')!r}: only the first --limit questions are known")
    limit = plan.get("limit")
    if not (limit is None or _count(limit, 1)) or not _count(plan.get("questions"), 0):
        raise broken("plan 'limit' (null or a count) or 'questions' (a count) is malformed")
    if not _count(ds.get("rows"), 1) or not isinstance(ds.get("sha256"), str) \
            or not _SHA256.fullmatch(ds["sha256"]):
        raise broken("'dataset' needs 'rows' (a count) and 'sha256' (64 hex digits)")
    test_file = ds.get("test-file")
    if test_file is not None and not isinstance(test_file, str):
        raise broken("'dataset.test-file' is not a path")
    if not isinstance(targets, str) or not _SHA256.fullmatch(targets):
        raise broken("'targets-sha256' is missing or not 64 hex digits")
    return Plan(rows=ds["rows"], limit=limit, questions=plan["questions"],
                dataset_sha256=ds["sha256"], targets_sha256=targets, test_file=test_file,
                offset=plan["offset"])
