"""The GSM8K test split as evidence: its rows read from a JSONL file, and the two digests that
bind an eval to them.

The split's digest is taken over its rows' content (each row's ``question`` and ``answer``,
in order, as canonical JSON), not over the file's bytes, so the same split gives the same
digest whether lm-eval loaded it from a local file or from the Hugging Face hub. The targets'
digest is taken over ``(doc id, target)`` of the questions an eval asked, in doc-id order.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from pathlib import Path

import orjson

from infersweep.diagnostics import Diagnostic, InputError

Row = tuple[str, str]  # (question, answer)


def is_row(obj) -> bool:
    """A GSM8K row: a question and an answer that ends in ``#### N``."""
    return (isinstance(obj, dict) and isinstance(obj.get("question"), str)
            and isinstance(obj.get("answer"), str) and "####" in obj["answer"])


def digest_rows(rows: Sequence[Row]) -> str:
    h = hashlib.sha256()
    for q, a in rows:
        h.update(orjson.dumps({"answer": a, "question": q}, option=orjson.OPT_SORT_KEYS) + b"\n")
    return h.hexdigest()


def digest_targets(targets: Iterable[tuple[int, str]]) -> str:
    h = hashlib.sha256()
    for doc_id, target in sorted(targets):
        h.update(orjson.dumps([doc_id, target]) + b"\n")
    return h.hexdigest()


def from_docs(docs: Iterable[dict]) -> list[Row]:
    """The rows of lm-eval's test documents (what the run evaluated, local or hub)."""
    return [(str(d["question"]), str(d["answer"])) for d in docs]


def read_rows(path: Path, what: str) -> list[Row]:
    """Every row of a GSM8K-format JSONL file; a located ``[eval-dataset]`` error otherwise."""
    p = str(path)
    try:
        raw = Path(path).read_bytes()
    except FileNotFoundError:
        raise InputError(Diagnostic(p, 0, 0, f"{what}: file not found",
                                    "give the GSM8K test split (JSONL) the eval ran on",
                                    "eval-dataset-missing")) from None
    except IsADirectoryError:
        raise InputError(Diagnostic(p, 0, 0, f"{what}: a folder, not a file",
                                    "give the test split's JSONL file", "eval-dataset")) from None
    except OSError as exc:
        raise InputError(Diagnostic(p, 0, 0, f"{what}: cannot read ({exc.strerror})", "",
                                    "eval-dataset")) from None
    rows: list[Row] = []
    for lineno, line in enumerate(raw.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            raise InputError(Diagnostic(p, lineno, 1, f"{what}: not JSON ({exc})",
                                        "expected one GSM8K row per line", "eval-dataset")) \
                from None
        if not is_row(obj):
            raise InputError(Diagnostic(p, lineno, 1, f"{what}: not a GSM8K row",
                                        'expected {"question": ..., "answer": "... #### N"}',
                                        "eval-dataset"))
        rows.append((obj["question"], obj["answer"]))
    if not rows:
        raise InputError(Diagnostic(p, 0, 0, f"{what}: no rows",
                                    "give the GSM8K test split the eval ran on", "eval-dataset"))
    return rows
