"""Render the recipe of one matrix row: server from its template (or from the srt-slurm
checkout's recipe), workload from the row."""

from __future__ import annotations

import json
from pathlib import Path

from infersweep.config.schema import validate_data
from infersweep.diagnostics import Diagnostic, InputError
from infersweep.matrix.rows import concs as row_concs
from infersweep.recipe import (
    agenticwork,
    lookup,
    refusal,
    rowexpr,
    rowfit,
    rowrules,
    schema,
    settings,
    srtrecipe,
    template,
    topology,
    workload,
)
from infersweep.recipe.rendered import Rendered
from infersweep.recipe.yamlwalk import diag_at
from infersweep.yamldoc import YamlDoc, load_yaml

__all__ = ["CONFIG_FILE", "TEMPLATE_ROOT", "Rendered", "load_rows", "render_row"]

CONFIG_FILE = settings.CONFIG_FILE
TEMPLATE_ROOT = lookup.TEMPLATE_ROOT


def check_template(doc: YamlDoc) -> list[Diagnostic]:
    """Everything wrong with a template on its own (no row needed)."""
    if not isinstance(doc.data, dict):
        return [Diagnostic(doc.path, 1, 1, "a template must be a YAML mapping",
                           rule="template")]
    found = (template.concurrency_literals(doc) + template.placeholder_problems(doc)
             + template.benchmark_command(doc) + rowrules.check(doc))
    # a value that is (or holds) a placeholder is checked once filled, in the rendered recipe
    filled = {(s.node.start_mark.line + 1, s.node.start_mark.column + 1)
              for s in template.server_scalars(doc) if not s.is_key and template.placeholders(s)}
    taken = {(d.line, d.col) for d in found} | filled
    found += [d for d in schema.validate(doc, schema.TEMPLATE_SCHEMA)
              if (d.line, d.col) not in taken]
    found += topology.check(doc, doc.data)
    return sorted(set(found))


def _fill(doc: YamlDoc, row: dict, source: str) -> dict:
    """A copy of the template's data with every placeholder filled from the row."""
    data = json.loads(json.dumps(doc.data, default=str))  # no shared (aliased) parts
    data.pop(template.ROW_SETTINGS, None)
    problems = []

    def get(name: str):
        found = rowexpr.value(row, name)
        if found is None:
            raise LookupError(name)
        return found

    for s in template.server_scalars(doc):
        if s.is_key or not template.placeholders(s):
            continue
        text = s.text
        whole_value = None
        for whole, inner in template.placeholders(s):
            try:
                value = rowexpr.evaluate(inner, get)
            except LookupError as exc:
                problems.append(diag_at(doc, s, whole, f"the row ({rowfit.row_label(row)}) "
                                        f"has no '{exc.args[0]}'", "set it in the catalog "
                                        "entry or drop the placeholder", "template-placeholder"))
                continue
            except ValueError as exc:
                problems.append(diag_at(doc, s, whole, f"row ({rowfit.row_label(row)}): {exc}",
                                        "use number fields in arithmetic",
                                        "template-placeholder"))
                continue
            if whole == text.strip():
                whole_value = value
            text = text.replace(whole, template.as_text(value))
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
    make = agenticwork.command if getattr(work, "agentic", False) else workload.command
    command = make(work, data["name"], client=client, result_dir=result_dir)
    data["benchmark"] = {"type": "custom", "command": command,
                         **{k: v for k, v in bench.items() if k not in ("type", "command")}}


def render_row(row: dict, repo: str | Path = ".", *, source: str = "<row>",
               client: str = workload.DEFAULT_CLIENT,
               result_dir: str = workload.DEFAULT_RESULT_DIR,
               srt_slurm: str | Path | None = None, missing: str = lookup.REFUSE) -> Rendered:
    """The recipe ``srtctl apply`` runs for ``row``: from its template under ``repo``'s
    benchmarks/ (validated against the recipe schema) or, when there is none, from the
    recipe of the srt-slurm checkout ``srt_slurm``, or its framework's default (see ``lookup``;
    ``missing`` says whether a default may stand in for a named recipe that exists nowhere)."""
    check_row_schema(row, source)
    ratio = row.get(workload.RANGE_RATIO_FIELD, workload.DEFAULT_RANGE_RATIO)
    if isinstance(ratio, bool) or not isinstance(ratio, (int, float)) or not 0 < ratio <= 1:
        raise InputError(Diagnostic(source, 0, 0, f"{workload.RANGE_RATIO_FIELD} must be a "
                                    f"number in (0, 1], got {json.dumps(ratio)}",
                                    "lengths are drawn from [floor(r*L), L]", "row-schema"))
    concs = row_concs(row)
    if len(set(concs)) != len(concs):
        raise InputError(Diagnostic(source, 0, 0, f"row lists a concurrency twice: {concs}",
                                    "list each point once", "row-schema"))
    found = lookup.find(row, Path(repo), Path(srt_slurm) if srt_slurm else None, source,
                        missing=missing)
    if found.source == lookup.SRT_SLURM:
        settings.check_known(row, source)
        return srtrecipe.render(found, row, source=source, client=client,
                                result_dir=result_dir)
    doc = load_yaml(found.path)
    settings.check_known(row, source, settings.KNOWN_TO_TEMPLATES | template.settings_read(doc))
    problems = check_template(doc)
    if problems:
        raise InputError(problems)
    problems = rowfit.check(row, source, doc)
    if problems:
        raise InputError(problems)
    data = apply_row_settings(doc, _fill(doc, row, source), row, concs, source)
    work = (agenticwork.from_row(row) if agenticwork.is_agentic(row)
            else workload.from_row(row))
    set_benchmark(data, work, client=client, result_dir=result_dir)
    problems = (schema.validate(doc, schema.RECIPE_SCHEMA, data=data) + topology.check(doc, data)
                + rowfit.check_rendered(row, data, source))
    if problems:
        raise InputError(problems)
    return Rendered(data, found.path, found.config_file, work, work.points(data["name"]),
                    source=found.source, replaces=found.replaces)


def server_for(doc: YamlDoc, data: dict, row: dict, conc: int) -> dict:
    """The template's server for ``row`` at concurrency ``conc``: its ``row-settings``
    applied (a refusing rule refuses the row, with the rule's own words)."""
    try:
        return rowrules.apply(data, doc.data.get(template.ROW_SETTINGS),
                              rowrules.Context(row, conc))
    except rowrules.Refused as exc:
        diag = doc.diag(exc.pointer, f"row ({rowfit.row_label(row)}) refused by the template: "
                        f"{exc.message}", "use a template that supports it, or change the "
                        "catalog entry's search-space", rule="row-refused")
        raise refusal.RowRefused(diag, refusal.ROW_SETTINGS, exc.message) from None
    except ValueError as exc:
        raise InputError(doc.diag((template.ROW_SETTINGS,), f"row "
                                  f"({rowfit.row_label(row)}): {exc}",
                                  rule="template-row-settings")) from None


def apply_row_settings(doc: YamlDoc, data: dict, row: dict, concs: list[int],
                       source: str) -> dict:
    """One server for all of the row's concurrencies, or an error: a job starts its engine
    once, so points whose settings differ cannot share it."""
    servers = [server_for(doc, data, row, c) for c in concs]
    for conc, server in zip(concs[1:], servers[1:], strict=True):
        if server != servers[0]:
            raise InputError(Diagnostic(
                source, 0, 0, f"row ({rowfit.row_label(row)}): the template's row-settings "
                f"give concurrency {conc} another server than concurrency {concs[0]}",
                "one job starts one server: run these concurrencies as separate rows "
                "(`infersweep matrix` groups only points with the same server)",
                "row-conc-settings"))
    return servers[0]


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
