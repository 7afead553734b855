"""The recipe a launch submits: the row rendered (with its template, or one given by
``--template``/the fleet), checked to fit the fleet, tagged with the run.

A template override exists because a fleet's srt-slurm may not read the row's template: the
upstream srt-slurm the local test fleet runs has no ATOM backend, so the same rows render
there with an upstream sglang template. An override gets every template check that does not
belong to the ATOM dialect (no concurrency, placeholders from the row, no benchmark command);
srtctl validates the rest at submit time, before sbatch.
"""

from __future__ import annotations

import copy
from dataclasses import replace
from pathlib import Path

from infersweep.bench.seeds import RUN_ID_ENV, run_tag
from infersweep.diagnostics import Diagnostic, InputError
from infersweep.matrix.rows import concs as row_concs
from infersweep.recipe import agenticwork, render, rowfit, rowrules, template, topology, workload
from infersweep.recipe.render import Rendered
from infersweep.rowjobs.fleet import Fleet
from infersweep.rowjobs.jobtag import JobTag
from infersweep.yamldoc import load_yaml


def render_override(row: dict, path: Path, *, source: str, client: str,
                    result_dir: str) -> Rendered:
    render.check_row_schema(row, source)
    if not path.is_file():
        raise InputError(Diagnostic(str(path), 0, 0, "no such template",
                                    "pass an existing recipe template to --template",
                                    "row-template"))
    doc = load_yaml(path)
    if not isinstance(doc.data, dict):
        raise InputError(Diagnostic(str(path), 1, 1, "a template must be a YAML mapping",
                                    rule="template"))
    found = (template.concurrency_literals(doc) + template.placeholder_problems(doc)
             + template.benchmark_command(doc) + rowrules.check(doc))
    if found:
        raise InputError(sorted(set(found)))
    data = render.apply_row_settings(doc, render._fill(doc, row, source), row,
                                     row_concs(row), source)
    work = (agenticwork.from_row(row) if agenticwork.is_agentic(row)
            else workload.from_row(row))
    render.set_benchmark(data, work, client=client, result_dir=result_dir)
    return Rendered(data, path, f"--template {path}", work, work.points(data["name"]))


def render_for_launch(row: dict, repo: Path, *, template_path: Path | None, source: str,
                      client: str, result_dir: str, srt_slurm: Path | None = None) -> Rendered:
    if template_path is not None:
        return render_override(row, template_path, source=source, client=client,
                               result_dir=result_dir)
    return render.render_row(row, repo, source=source, client=client, result_dir=result_dir,
                             srt_slurm=srt_slurm)


def check_fits(rendered: Rendered, row: dict, fleet: Fleet, source: str) -> None:
    """The recipe's topology fits the fleet's nodes and matches the row's worker counts."""
    res = rendered.recipe.get("resources") or {}
    roles = topology.roles(res)
    label = rowfit.row_label(row)
    problems = []
    gpn = res.get("gpus_per_node")
    if isinstance(gpn, int) and gpn != fleet.gpus_per_node:
        problems.append(f"the recipe assumes {gpn} GPUs per node, fleet {fleet.name} has "
                        f"{fleet.gpus_per_node}")
    nodes = sum(r.nodes for r in roles)
    if nodes > fleet.nodes:
        problems.append(f"the recipe needs {nodes} nodes "
                        f"({'; '.join(str(r) for r in roles)}), fleet {fleet.name} has "
                        f"{fleet.nodes}")
    if row.get("disagg"):
        for r in roles:
            want = (row.get(r.name) or {}).get("num-worker")
            if r.name in ("prefill", "decode") and want is not None and want != r.workers:
                problems.append(f"the row asks for {want} {r.name} worker(s), the recipe "
                                f"{rendered.name} has {r.workers}")
    if problems:
        raise InputError([Diagnostic(source, 0, 0, f"row ({label}) does not fit: {p}",
                                     f"run it on a fleet with room (see {fleet.source}) or "
                                     "pick the template for this topology", "fleet-fit")
                          for p in problems])


def tag_recipe(rendered: Rendered, tag: JobTag) -> Rendered:
    """The recipe with the run's tag as its Slurm comment (the name comes from RUNNER_NAME),
    and the run in the benchmark step's environment: the client derives each point's prompt
    seed from it, so no two points or runs send the same prompts (infersweep/bench/seeds.py)."""
    recipe = copy.deepcopy(rendered.recipe)
    directives = dict(recipe.get("sbatch_directives") or {})
    directives["comment"] = tag.comment
    recipe["sbatch_directives"] = directives
    if isinstance(recipe.get("benchmark"), dict):
        bench = recipe["benchmark"]
        bench["env"] = {**(bench.get("env") or {}),
                        RUN_ID_ENV: run_tag(tag.run_id, tag.attempt)}
    return replace(rendered, recipe=recipe)


def load_row(value: str | None, environ: dict[str, str]) -> tuple[dict, str]:
    """``--row FILE|-|JSON`` or ``$INFERSWEEP_ROW``: exactly one matrix row."""
    import sys

    if value is None:
        text = environ.get("INFERSWEEP_ROW")
        if not text:
            raise InputError(Diagnostic("<row>", 0, 0, "no row given",
                                        "pass --row FILE|-|JSON or set INFERSWEEP_ROW "
                                        "(the benchmark workflows do)", "row-json"))
        source = "$INFERSWEEP_ROW"
    elif value == "-":
        text, source = sys.stdin.read(), "<stdin>"
    elif value.lstrip().startswith(("{", "[")):
        text, source = value, "--row"
    else:
        p = Path(value)
        if not p.is_file():
            raise InputError(Diagnostic(value, 0, 0, "no such row file",
                                        "pass a file, '-' for stdin, or the row's JSON",
                                        "row-json"))
        text, source = p.read_text(encoding="utf-8"), value
    rows = render.load_rows(text, source)
    if len(rows) != 1:
        raise InputError(Diagnostic(source, 1, 1, f"expected one row, got {len(rows)}",
                                    "a launch runs one matrix row; use `infersweep sweep run` "
                                    "for several", "row-json"))
    render.check_row_schema(rows[0], source)
    return rows[0], source

