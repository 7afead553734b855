"""The changelog metadata of a run made on this machine (``sweep run``).

A CI run carries ``changelog_metadata.json``: the refs of its pull request and the entries it
appended. A local run has no pull request, so it records the repository's commit and every
entry of ``perf-changelog.yaml`` that names a config it swept. Staged with the run like a CI
run's, this lets the report's compare view list the entries added between two local runs: an
entry appended (with its config change) between them is carried by the later run only.
"""

from __future__ import annotations

from pathlib import Path

from infersweep import gitexec
from infersweep.changelog.change import CHANGELOG
from infersweep.changelog.process import entry_metadata
from infersweep.config.schema import validate_doc
from infersweep.diagnostics import Diagnostic, InputError
from infersweep.matrix.keys import expand_keys
from infersweep.yamldoc import parse_yaml


def _head(repo: Path) -> str | None:
    """The checkout's commit, or None outside a git repository (or without git)."""
    try:
        done = gitexec.run(["rev-parse", "--verify", "HEAD"], cwd=str(repo), timeout=30)
    except gitexec.GitMissing:
        return None
    if done.returncode != 0:
        return None
    return done.stdout.strip() or None


def entries_naming(repo: Path, keys: list[str]) -> list[dict]:
    """The changelog's entries whose ``config-keys`` (names or globs) match any of ``keys``,
    in the file's order; a changelog that is not valid is refused with its located errors."""
    path = repo / CHANGELOG
    if not path.is_file():
        return []
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise InputError(Diagnostic(str(path), 0, 0, "file is not valid UTF-8",
                                    "save it as UTF-8", "encoding")) from None
    doc = parse_yaml(text, str(path))
    problems = validate_doc(doc, "perf-changelog") if doc.data is not None else []
    if problems:
        raise InputError(problems)
    return [entry_metadata(e) for e in doc.data or []
            if expand_keys(e["config-keys"], keys)[0]]


def local_metadata(repo: Path, keys: list[str]) -> dict:
    """``changelog_metadata.json`` for a local run of ``keys`` from the checkout ``repo``."""
    return {"base_ref": None, "head_ref": _head(repo), "entries": entries_naming(repo, keys)}
