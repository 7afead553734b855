"""Render a recipe template for one matrix row: server from the template, workload from the row."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from infersweep.config.schema import validate_data
from infersweep.diagnostics import Diagnostic, InputError
from infersweep.recipe import rowfit, schema, template, topology, workload
from infersweep.recipe.yamlwalk import diag_at, scalars
from infersweep.yamldoc import YamlDoc, load_yaml

TEMPLATE_ROOT = Path("benchmarks", "multi_node", "srt-slurm")
CONFIG_FILE = "CONFIG_FILE"
CONFIG_PREFIX = "recipes/"


@dataclass
class Rendered:
    recipe: dict
    template: Path  # as found (repo-relative when the repo is the cwd)
    config_file: str  # the row's CONFIG_FILE value
    workload: workload.Workload
    points: list[workload.Point] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.recipe["name"]

    def text(self) -> str:
        head = (f"# Rendered by `infersweep recipe render` from {self.template.as_posix()};\n"
                "# edit the template or the matrix row, not this file.\n"
                f"# points (concurrency): {' '.join(str(p.conc) for p in self.points)}\n")
        return head + dump(self.recipe)

    def as_json(self) -> dict:
        return {"template": self.template.as_posix(), "config-file": self.config_file,
                "name": self.name, "recipe": self.recipe,
                "points": [{"conc": p.conc, "num-prompts": p.num_prompts,
                            "num-warmups": p.num_warmups, "result-file": p.result_file}
                           for p in self.points]}


class _Dumper(yaml.SafeDumper):
    def ignore_aliases(self, data):
        return True


def _str(dumper, value: str):
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


def dump(data: dict) -> str:
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100,
                     default_flow_style=False)


def config_file(row: dict, source: str) -> str:
    """The row's ``CONFIG_FILE=recipes/...`` setting (InferenceX's way to name a recipe)."""
    found = {}
    for role in ("prefill", "decode"):
        value = rowfit.settings(row.get(role) or {}).get(CONFIG_FILE)
        if value is not None:
            found[role] = value
    if not found:
        raise InputError(Diagnostic(
            source, 0, 0, f"row ({rowfit.row_label(row)}) names no recipe template",
            "add CONFIG_FILE=recipes/<path>.yaml to the search-space entry's prefill "
            "additional-settings in the master config", "row-template"))
    if len(set(found.values())) > 1:
        raise InputError(Diagnostic(
            source, 0, 0, f"row ({rowfit.row_label(row)}) names two templates: "
            + ", ".join(f"{r} {v}" for r, v in found.items()), "keep one CONFIG_FILE",
            "row-template"))
    value = next(iter(found.values()))
    if ":" in value:
        raise InputError(Diagnostic(
            source, 0, 0, f"CONFIG_FILE={value}: override selectors are not supported",
            "a template is one concrete recipe; name the file without ':selector'",
            "row-template"))
    if not value.startswith(CONFIG_PREFIX) or ".." in Path(value).parts:
        raise InputError(Diagnostic(
            source, 0, 0, f"CONFIG_FILE={value} is not of the form recipes/<path>.yaml",
            f"templates live under {TEMPLATE_ROOT.as_posix()}/ and are named "
            "recipes/<path below it>", "row-template"))
    return value


def template_path(value: str, repo: Path) -> Path:
    return repo / TEMPLATE_ROOT / value[len(CONFIG_PREFIX):]


def check_template(doc: YamlDoc) -> list[Diagnostic]:
    """Everything wrong with a template on its own (no row needed)."""
    if not isinstance(doc.data, dict):
        return [Diagnostic(doc.path, 1, 1, "a template must be a YAML mapping",
                           rule="template")]
    found = (template.concurrency_literals(doc) + template.placeholder_problems(doc)
             + template.benchmark_command(doc))
    taken = {(d.line, d.col) for d in found}
    found += [d for d in schema.validate(doc, schema.TEMPLATE_SCHEMA)
              if (d.line, d.col) not in taken]
    found += topology.check(doc, doc.data)
    return sorted(set(found))


def _lookup(row: dict, dotted: str):
    value = row
    for part in dotted.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value


def _fill(doc: YamlDoc, row: dict, source: str) -> dict:
    """A copy of the template's data with every placeholder filled from the row."""
    data = json.loads(json.dumps(doc.data, default=str))  # no shared (aliased) parts
    problems = []
    for s in scalars(doc):
        if s.is_key or not template.placeholders(s):
            continue
        text = s.text
        whole_value = None
        for whole, inner in template.placeholders(s):
            fieldname = template.ROW_FIELD.match(inner).group(1)
            value = _lookup(row, fieldname)
            if value is None:
                problems.append(diag_at(doc, s, whole, f"the row ({rowfit.row_label(row)}) "
                                        f"has no '{fieldname}'", "set it in the catalog entry "
                                        "or drop the placeholder", "template-placeholder"))
                continue
            if whole == text.strip():
                whole_value = value
            text = text.replace(whole, str(value))
        target = data
        for part in s.pointer[:-1]:
            target = target[part]
        target[s.pointer[-1]] = whole_value if whole_value is not None and not isinstance(
            whole_value, str) else text
    if problems:
        raise InputError(problems)
    return data


def check_row_schema(row: dict, source: str) -> None:
    """``row`` is a matrix row, plus optionally the workflow's range ratio (InferenceX's
    input name)."""
    problems = validate_data({k: v for k, v in row.items() if k != workload.RANGE_RATIO_FIELD},
                             "matrix-row")
    if problems:
        raise InputError([Diagnostic(source, 0, 0, f"not a matrix row: {p}",
                                     "pass a row from `infersweep matrix`", "row-schema")
                          for p in problems])


def set_benchmark(data: dict, work, *, client: str, result_dir: str) -> None:
    """The recipe's benchmark step becomes our client's command for ``work`` (``type`` and
    ``command`` first, the template's other benchmark keys kept after them)."""
    bench = dict(data.get("benchmark") or {})
    command = workload.command(work, data["name"], client=client, result_dir=result_dir)
    data["benchmark"] = {"type": "custom", "command": command,
                         **{k: v for k, v in bench.items() if k not in ("type", "command")}}


def render_row(row: dict, repo: str | Path = ".", *, source: str = "<row>",
               client: str = workload.DEFAULT_CLIENT,
               result_dir: str = workload.DEFAULT_RESULT_DIR) -> Rendered:
    """The recipe ``srtctl apply`` runs for ``row``, validated against its schema."""
    check_row_schema(row, source)
    ratio = row.get(workload.RANGE_RATIO_FIELD, workload.DEFAULT_RANGE_RATIO)
    if isinstance(ratio, bool) or not isinstance(ratio, (int, float)) or not 0 < ratio <= 1:
        raise InputError(Diagnostic(source, 0, 0, f"{workload.RANGE_RATIO_FIELD} must be a "
                                    f"number in (0, 1], got {json.dumps(ratio)}",
                                    "lengths are drawn from [floor(r*L), L]", "row-schema"))
    concs = row["conc"] if isinstance(row["conc"], list) else [row["conc"]]
    if len(set(concs)) != len(concs):
        raise InputError(Diagnostic(source, 0, 0, f"row lists a concurrency twice: {concs}",
                                    "list each point once", "row-schema"))
    value = config_file(row, source)
    path = template_path(value, Path(repo))
    if not path.is_file():
        raise InputError(Diagnostic(source, 0, 0, f"CONFIG_FILE={value}: no template {path}",
                                    f"add it under {TEMPLATE_ROOT.as_posix()}/ or fix the "
                                    "catalog entry", "row-template"))
    doc = load_yaml(path)
    problems = check_template(doc)
    if problems:
        raise InputError(problems)
    problems = rowfit.check(row, source, doc)
    if problems:
        raise InputError(problems)
    data = _fill(doc, row, source)
    work = workload.from_row(row)
    set_benchmark(data, work, client=client, result_dir=result_dir)
    problems = schema.validate(doc, schema.RECIPE_SCHEMA, data=data) + topology.check(doc, data)
    if problems:
        raise InputError(problems)
    try:
        shown = path.relative_to(Path.cwd())
    except ValueError:
        shown = path
    return Rendered(data, shown, value, work, work.points(data["name"]))


def load_rows(text: str, source: str) -> list[dict]:
    """One row (a JSON object) or a list of rows (what `infersweep matrix` prints)."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(Diagnostic(source, exc.lineno, exc.colno, f"invalid JSON: {exc.msg}",
                                    "pass a row as printed by `infersweep matrix`",
                                    "row-json")) from None
    rows = value if isinstance(value, list) else [value]
    if not rows or not all(isinstance(r, dict) for r in rows):
        raise InputError(Diagnostic(source, 1, 1, "expected a matrix row (a JSON object) or a "
                                    "list of rows", "pass the output of `infersweep matrix`",
                                    "row-json"))
    return rows
