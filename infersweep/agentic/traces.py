"""A Weka trace corpus on disk: read it, check it, refuse it at ``file:line:col``.

A corpus is what the replay client reads: a directory of ``*.json`` files with one trace
each (``--custom-dataset-type weka_trace --input-file DIR``), one such file, or a
``traces.jsonl`` with one trace per line (how the public datasets ship). A directory with
no ``*.json`` but one ``*.jsonl`` (a downloaded dataset snapshot) is read as that file.

:func:`check_corpus` lists every problem (:mod:`traceschema`: the client's schema and the
checks of sense) and :func:`load_corpus` raises :class:`InputError` with them, so a bad
corpus is refused before any GPU is allocated. Problems that the client survives (a request
with ``out`` 0) are kept as :attr:`Corpus.warnings`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from infersweep.agentic import tracejson
from infersweep.agentic.traceschema import Problem, trace_problems
from infersweep.diagnostics import Diagnostic, InputError


@dataclass
class Trace:
    """One trace and where it came from (``line`` is 1 for a file of its own)."""

    path: str
    line: int
    data: dict

    @property
    def id(self) -> str:
        return self.data["id"]


@dataclass
class Corpus:
    path: str
    traces: list[Trace]
    warnings: list[Diagnostic] = field(default_factory=list)


def corpus_files(path: str | Path) -> tuple[list[Path], bool]:
    """The files a corpus is read from, and whether they are JSON Lines."""
    p = Path(path)
    if p.is_dir():
        files = sorted(p.glob("*.json"))
        if files:
            return files, False
        lines = sorted(p.glob("*.jsonl"))
        if len(lines) == 1:
            return lines, True
        what = "several *.jsonl files" if lines else "no *.json or *.jsonl file"
        raise InputError(Diagnostic(str(p), 0, 0, f"not a trace corpus: {what}",
                                    "give a directory of *.json traces or one traces.jsonl",
                                    "trace-corpus"))
    if not p.exists():
        raise InputError(Diagnostic(str(p), 0, 0, "no such file or directory",
                                    "give a directory of *.json traces or a traces.jsonl",
                                    "trace-corpus"))
    return [p], p.suffix == ".jsonl"


def _documents(files: list[Path], jsonl: bool) -> Iterator[tuple[Path, int, bytes]]:
    """(file, first line, raw bytes) of every trace."""
    for f in files:
        try:
            raw = f.read_bytes()
        except OSError as exc:
            raise InputError(Diagnostic(str(f), 0, 0, f"cannot read: {exc.strerror}",
                                        rule="trace-corpus")) from None
        if not jsonl:
            yield f, 1, raw
            continue
        for n, line in enumerate(raw.split(b"\n"), 1):
            if line.strip():
                yield f, n, line


def _syntax_error(path: Path, line: int, exc: orjson.JSONDecodeError) -> Diagnostic:
    msg = exc.msg.split(": line")[0] if exc.msg else "invalid JSON"
    return Diagnostic(str(path), line + exc.lineno - 1, exc.colno,
                      f"not valid JSON: {msg}", "a trace is one JSON object", "trace-json")


def _locate(doc: bytes, path: Path, line: int, p: Problem) -> Diagnostic:
    text = doc.decode("utf-8", errors="replace")
    offset = tracejson.locate(text, p.pointer, key=p.at_key)
    ln, col = tracejson.line_col(text, offset)
    return Diagnostic(str(path), line + ln - 1, col, p.message, p.hint, p.rule)


def _read(path: str | Path) -> tuple[list[Trace], list[Diagnostic], list[Diagnostic]]:
    files, jsonl = corpus_files(path)
    traces: list[Trace] = []
    errors: list[Diagnostic] = []
    warnings: list[Diagnostic] = []
    first_of_id: dict[str, Trace] = {}
    for f, line, raw in _documents(files, jsonl):
        try:
            data = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            errors.append(_syntax_error(f, line, exc))
            continue
        problems = trace_problems(data)
        for p in problems:
            (warnings if p.warning else errors).append(_locate(raw, f, line, p))
        if any(not p.warning for p in problems):
            continue
        trace = Trace(str(f), line, data)
        first = first_of_id.setdefault(trace.id, trace)
        if first is not trace:
            d = _locate(raw, f, line, Problem(("id",), f"trace id '{trace.id}' is also the id "
                                              f"of the trace at {first.path}:{first.line}",
                                              "the client refuses two traces with one id",
                                              "trace-duplicate-id"))
            errors.append(d)
            continue
        traces.append(trace)
    if not traces and not errors:
        errors.append(Diagnostic(str(path), 0, 0, "the corpus has no traces",
                                 "give a directory of *.json traces or a traces.jsonl",
                                 "trace-corpus"))
    return traces, errors, warnings


def check_corpus(path: str | Path) -> list[Diagnostic]:
    """Every error in the corpus at ``path`` (empty when the client will accept it)."""
    try:
        return _read(path)[1]
    except InputError as exc:
        return exc.diagnostics


def load_corpus(path: str | Path) -> Corpus:
    """The corpus at ``path``; :class:`InputError` listing every error if it has any."""
    traces, errors, warnings = _read(path)
    if errors:
        raise InputError(errors)
    return Corpus(str(path), traces, warnings)
