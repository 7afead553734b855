"""The config catalog: master configs merged across files, plus the runners file.

Loading runs the schema and every cross-field rule, and collects *all* diagnostics before
raising, so one `infersweep validate` lists every problem in every file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from infersweep.config import keyname, vocabulary
from infersweep.config.capacity import Capacity, FleetSize, label_capacity
from infersweep.config.keycharset import check_key_charset
from infersweep.config.rules import check_entry
from infersweep.config.schema import validate_doc
from infersweep.config.settingvalues import check_settings
from infersweep.diagnostics import Diagnostic, InputError
from infersweep.yamldoc import YamlDoc, load_yaml

CONFIG_DIR = "configs"
MASTER_GLOB = "*-master.yaml"
RUNNERS_FILE = "runners.yaml"
FLEETS_FILE = "fleets.yaml"


@dataclass
class Runners:
    labels: dict[str, list[str]]
    hardware: dict[str, dict]
    doc: YamlDoc | None = None
    fleets: dict[str, FleetSize] = field(default_factory=dict)  # from fleets.yaml beside it
    _capacities: dict[str, Capacity] = field(default_factory=dict, repr=False, compare=False)

    @property
    def path(self) -> str:
        return self.doc.path if self.doc else "<runners>"

    def capacity(self, label: str) -> Capacity:
        """GPUs per node and nodes the label offers (computed once per label)."""
        if label not in self._capacities:
            self._capacities[label] = label_capacity(label, self.labels, self.hardware,
                                                     self.path, self.fleets)
        return self._capacities[label]


@dataclass
class Catalog:
    """Config entries in load order (file order, then key order within a file)."""

    entries: dict[str, dict]
    runners: Runners
    sources: dict[str, YamlDoc] = field(default_factory=dict)  # key -> document it came from
    warnings: list[Diagnostic] = field(default_factory=list)


def default_config_files(root: str | Path = ".") -> list[Path]:
    return sorted(Path(root, CONFIG_DIR).glob(MASTER_GLOB))


def default_runner_file(root: str | Path = ".") -> Path:
    return Path(root, CONFIG_DIR, RUNNERS_FILE)


def _doc(source: str | Path | YamlDoc) -> YamlDoc:
    return source if isinstance(source, YamlDoc) else load_yaml(source)


def load_runners(source: str | Path | YamlDoc) -> Runners:
    """The runners file, with the fleets file beside it (``fleets.yaml``) when there is one:
    the fleets say how many nodes a label's runners reach."""
    doc = _doc(source)
    diags = validate_doc(doc, "runners")
    fleets: dict[str, FleetSize] = {}
    beside = None if isinstance(source, YamlDoc) else Path(source).with_name(FLEETS_FILE)
    if beside is not None and beside.is_file():
        try:
            fleets = load_fleet_sizes(beside)
        except InputError as exc:
            diags.extend(exc.diagnostics)
    if diags:
        raise InputError(diags)
    return Runners(doc.data["labels"], doc.data.get("hardware") or {}, doc, fleets)


def load_fleet_sizes(path: str | Path) -> dict[str, FleetSize]:
    """Nodes and GPUs per node of every fleet in a fleets file (checked by its schema)."""
    doc = _doc(path)
    diags = validate_doc(doc, "fleets")
    if diags:
        raise InputError(diags)
    return {name: FleetSize(f["nodes"], f["gpus-per-node"], doc.path)
            for name, f in doc.data["fleets"].items()}


def load_catalog(config_files: list[str | Path | YamlDoc], runner_file: str | Path | YamlDoc,
                 *, strict_runners: bool = True) -> Catalog:
    """Load, validate and merge master configs (paths, or documents already parsed).

    ``strict_runners`` (what ``validate`` uses) makes a runner label missing from the
    runners file an error, and checks names across entries: a framework or precision that
    is a near miss of a known one, a config key that contradicts its entry. When false the
    label is a warning (InferenceX's own catalog names labels its runners file lacks) and the
    names are not checked: matrix and changelog read catalogs as they are.
    """
    if not config_files:
        raise InputError(Diagnostic(CONFIG_DIR, 0, 0, "no master config files found",
                                    f"add {CONFIG_DIR}/<vendor>-master.yaml or pass --config-files",
                                    "io"))
    diags: list[Diagnostic] = []
    warnings: list[Diagnostic] = []
    runners = None
    try:
        runners = load_runners(runner_file)
    except InputError as exc:
        diags.extend(exc.diagnostics)
    docs: list[YamlDoc] = []
    for path in config_files:
        try:
            docs.append(_doc(path))
        except InputError as exc:
            diags.extend(exc.diagnostics)
    entries: dict[str, dict] = {}
    sources: dict[str, YamlDoc] = {}
    invalid: set[str] = set()  # keys whose entry failed the schema
    for doc in docs:
        if doc.data is None:
            diags.append(Diagnostic(doc.path, 1, 1, "file is empty",
                                    "a master config maps config keys to entries", "schema"))
            continue
        schema_diags = validate_doc(doc, "master-config")
        diags.extend(schema_diags)
        if not isinstance(doc.data, dict):
            continue
        bad_keys = {_owning_key(doc, d) for d in schema_diags}
        invalid |= {key for key in bad_keys if key is not None}
        for key, entry in doc.data.items():
            if not isinstance(key, str):
                continue  # reported by the schema step ('key-type'); later steps need text
            diags.extend(check_key_charset(doc, key))
            if key in sources:
                other = sources[key].path
                diags.append(doc.diag((key,), f"config key '{key}' is already defined in {other}",
                                      "config keys must be unique across all master configs",
                                      rule="duplicate-key", key=True))
                continue
            entries[key] = entry
            sources[key] = doc
            if key in bad_keys or not isinstance(entry, dict):
                continue  # cross-field rules assume a schema-valid entry
            for diag in check_entry(doc, key, entry, runners):
                (warnings if diag.rule == "unknown-runner" and not strict_runners
                 else diags).append(diag)
            diags.extend(check_settings(doc, key, entry))
    if strict_runners:
        _check_names(entries, sources, invalid, runners, diags)
    if diags:
        raise InputError(sorted(set(diags)))
    assert runners is not None
    return Catalog(entries, runners, sources, warnings)


def _check_names(entries: dict[str, dict], sources: dict[str, YamlDoc], invalid: set[str],
                 runners: Runners | None, diags: list[Diagnostic]) -> None:
    """Framework and precision values, then config keys, across the schema-valid entries.
    A value reported as a typo is the cause: the key is not also blamed for it."""
    valid = {k: e for k, e in entries.items() if k not in invalid and isinstance(e, dict)}
    errors, typos = vocabulary.check_values(valid, sources)
    diags.extend(errors)
    frameworks = {e["framework"] for e in valid.values()} | set(vocabulary.recipe_engines())
    labels = runners.labels if runners is not None else {}
    for key, entry in valid.items():
        skip = {f for k, f in typos if k == key}
        diags.extend(keyname.check_key(sources[key], key, entry, labels=labels,
                                       frameworks=frameworks, skip=skip))


def _owning_key(doc: YamlDoc, diag: Diagnostic) -> str | None:
    """The top-level config key whose entry holds ``diag`` (by line range)."""
    if not isinstance(doc.data, dict) or doc.root is None:
        return None
    owner = None
    for key_node, _ in doc.root.value:
        if key_node.start_mark.line + 1 <= diag.line:
            owner = key_node.value
    return owner
