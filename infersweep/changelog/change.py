"""A changelog change between two refs: its appended entries, checked and resolved."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from infersweep.changelog import gitrefs, history
from infersweep.changelog.gate import LAYOUT_RULES, Appended, check_layout, compare, parse_appended
from infersweep.config.catalog import CONFIG_DIR, MASTER_GLOB, RUNNERS_FILE, Catalog, load_catalog
from infersweep.diagnostics import Diagnostic, InputError, did_you_mean
from infersweep.matrix.keys import expand_keys
from infersweep.yamldoc import parse_yaml

CHANGELOG = "perf-changelog.yaml"


@dataclass
class Change:
    base_ref: str
    head_ref: str
    base_commit: str  # the merge-base the head is judged against
    head_commit: str
    appended: Appended
    catalog: Catalog  # the catalog at the head ref
    keys: list[list[str]]  # resolved config keys, one list per appended entry
    warnings: list[Diagnostic] = field(default_factory=list)

    @property
    def entries(self) -> list[dict]:
        return self.appended.entries


def catalog_at(root: Path, ref: str, label: str | None) -> Catalog:
    """The config catalog as committed at ``ref`` (never the working tree itself); files
    are named ``path@label`` in messages, or just ``path`` without a label."""
    from fnmatch import fnmatch

    at = f"@{label}" if label else ""

    docs = []
    for path in gitrefs.list_at(root, ref, CONFIG_DIR):
        if fnmatch(Path(path).name, MASTER_GLOB):
            text = gitrefs.read_at(root, ref, path).decode("utf-8", errors="replace")
            docs.append(parse_yaml(text, f"{path}{at}"))
    runners_path = f"{CONFIG_DIR}/{RUNNERS_FILE}"
    runners = gitrefs.read_at(root, ref, runners_path)
    if runners is None:
        raise InputError(Diagnostic(f"{runners_path}{at}", 0, 0,
                                    "runners file missing at this revision", rule="io"))
    return load_catalog(docs, parse_yaml(runners.decode("utf-8", errors="replace"),
                                         f"{runners_path}{at}"), strict_runners=False)


def load_change(root: Path, base_ref: str, head_ref: str,
                changelog: str = CHANGELOG, pr_number: int | None = None, *,
                fetch_missing: bool = False, strict_layout: bool = True,
                head_label: str | None = None) -> Change:
    """Check the change to ``changelog`` from ``base_ref`` to ``head_ref``; raise on problems.

    With ``strict_layout`` false (the matrix), formatting problems of the appended lines
    are warnings: the entries, not their layout, decide what runs. ``head_label`` names the
    head in messages when ``head_ref`` is a commit the user did not name (a snapshot of the
    working tree).
    """
    label = head_label or head_ref
    span = history.locate(root, base_ref, head_ref, fetch_missing)
    head_commit, base_commit = span.head, span.merge_base
    head_raw = gitrefs.read_at(root, head_commit, changelog)
    if head_raw is None:
        raise InputError(Diagnostic(changelog, 0, 0, f"{changelog} does not exist at "
                                    f"'{label}'", "create it at the repository root", "io"))
    base_raw = gitrefs.read_at(root, base_commit, changelog) or b""
    try:
        head, base = head_raw.decode("utf-8"), base_raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(Diagnostic(changelog, 0, 0, "file is not valid UTF-8",
                                    "save it as UTF-8", "encoding")) from None
    layout_warnings: list[Diagnostic] = []

    def formatting_as_warnings(found: list[Diagnostic]) -> list[Diagnostic]:
        if strict_layout:
            return found
        layout_warnings.extend(d for d in found if d.rule in LAYOUT_RULES)
        return [d for d in found if d.rule not in LAYOUT_RULES]

    diags, start = compare(changelog, base, head)
    diags = formatting_as_warnings(diags)
    if diags:  # layout and entries are meaningless until the base part is restored
        raise InputError(diags)
    diags = check_layout(changelog, base, head, start)
    if any(d.rule == "changelog-empty" for d in diags):
        raise InputError(diags)
    diags = formatting_as_warnings(diags)
    appended, entry_diags = parse_appended(changelog, head, start)
    diags += entry_diags
    if pr_number is not None:
        diags += _check_links(appended, pr_number)
    catalog = catalog_at(root, head_commit, None if head_label else head_ref)
    keys: list[list[str]] = []
    all_keys = list(catalog.entries)
    for i, entry in enumerate(appended.entries):
        patterns = entry.get("config-keys") if isinstance(entry, dict) else None
        if not isinstance(patterns, list) or not all(isinstance(p, str) for p in patterns):
            keys.append([])
            continue
        found, unmatched = expand_keys(patterns, all_keys)
        for pattern in unmatched:
            j = patterns.index(pattern)
            hint = did_you_mean(pattern, all_keys) or (
                "no key matches this glob" if any(c in pattern for c in "*?[")
                else "was it removed or renamed? keys must exist in configs/*-master.yaml "
                     f"at '{label}'")
            diags.append(appended.doc.diag((i, "config-keys", j),
                                           f"config key '{pattern}' is not in the catalog at "
                                           f"'{label}'", hint, rule="changelog-key"))
        keys.append(found)
    if diags:
        raise InputError(sorted(set(diags)))
    return Change(base_ref, head_ref, base_commit, head_commit, appended, catalog, keys,
                  layout_warnings + catalog.warnings)


def _check_links(appended: Appended, pr_number: int) -> list[Diagnostic]:
    out = []
    for i, entry in enumerate(appended.entries):
        link = entry.get("pr-link", "") if isinstance(entry, dict) else ""
        if not isinstance(link, str) or link == "XXX" or link.endswith("/pull/XXX"):
            continue
        if not link.endswith(f"/pull/{pr_number}"):
            out.append(appended.doc.diag((i, "pr-link"), f"pr-link points at another pull "
                                         f"request than #{pr_number}",
                                         "use this pull request's URL or the placeholder XXX",
                                         rule="changelog-link"))
    return out
