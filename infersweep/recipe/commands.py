"""`infersweep recipe render|diff|check|coverage`."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import click

from infersweep import progress
from infersweep.atomic import write_atomic
from infersweep.clicompat import multi_option
from infersweep.clitypes import POSITIVE_INT
from infersweep.diagnostics import Diagnostic, InputError
from infersweep.recipe import check as checks
from infersweep.recipe import diff as differ
from infersweep.recipe import lookup, workload
from infersweep.recipe.lookup import check_checkout
from infersweep.recipe.render import CONFIG_FILE, TEMPLATE_ROOT, load_rows, render_row
from infersweep.yamldoc import load_yaml

SRT_SLURM_OPTION = click.option(
    "--srt-slurm", "srt_slurm", type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="An srt-slurm checkout: a row's CONFIG_FILE=recipes/<path> that is not a template "
         "under benchmarks/multi_node/srt-slurm/ is its recipes/<path>.")


MISSING_OPTION = click.option(
    "--missing-recipe", "missing", type=click.Choice([lookup.REFUSE, lookup.FALLBACK]),
    default=lookup.REFUSE, show_default=True,
    help="A multi-node row whose CONFIG_FILE exists neither here nor in the checkout: refuse "
         "it (as a launch does), or render its framework's default "
         "(benchmarks/multi_node/srt-slurm/defaults/) in its place, marked as standing in "
         "for the named file: what the rows would run without their tuned recipes.")


@click.group()
def recipe():
    """srt-slurm recipes: render a row's recipe, compare, check, coverage of a catalog."""


def _rows_from_option(value: str) -> tuple[list[dict], str]:
    if value == "-":
        return load_rows(sys.stdin.read(), "<stdin>"), "<stdin>"
    if value.lstrip().startswith(("{", "[")):
        return load_rows(value, "<row>"), "<row>"
    path = Path(value)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(Diagnostic(value, 0, 0, "file not found",
                                    "pass a row file, '-' for stdin, or the row's JSON",
                                    "io")) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(Diagnostic(value, 0, 0, f"cannot read the row: {exc}", rule="io")) from None
    return load_rows(text, value), value


def _rows_from_catalog(key, concs, seq_lens, config_files, runner_config, repo):
    from infersweep.config.catalog import default_config_files, default_runner_file, load_catalog
    from infersweep.matrix.generate import Selection, generate_keyed

    files = list(config_files) or default_config_files(repo)
    catalog = load_catalog(files, runner_config or default_runner_file(repo),
                           strict_runners=False)
    from infersweep.matrix import points

    sel = Selection(config_keys=[key], conc=list(concs) or None,
                    seq_lens=list(seq_lens) or None, evals="none")
    bad = [s for s in sel.seq_lens or [] if not points.is_seq_family(s)]
    if bad:
        raise click.BadParameter(f"{bad[0]!r} is not a sequence family: {points.SEQ_FORM}",
                                 param_hint="'--seq-len'")
    if key in catalog.entries:
        for option, wrong, have in points.unmatched(catalog, sel):
            raise click.BadParameter(points.describe(option, wrong, have, [key]),
                                     param_hint=f"'{option.replace('seq-lens', 'seq-len')}'")
    from infersweep.recipe.grouping import grouped_pairs

    # as a sweep runs them: single-node points that start the same server are one job
    rows = [row for _, row in grouped_pairs(generate_keyed(catalog, sel), repo)]
    if not rows:
        raise InputError(Diagnostic(key, 0, 0, "the selection produced no rows",
                                    "--conc values must be points the config declares; "
                                    "see `infersweep explain " + key + "`", "row-select"))
    return rows


@recipe.command("render")
@click.option("--row", "row_arg", metavar="FILE|-|JSON",
              help="A matrix row (or a list of rows) as JSON: a file, '-' for stdin, or the text.")
@click.option("--config-key", metavar="KEY", help="Expand KEY through the matrix instead.")
@multi_option("--conc", type=POSITIVE_INT, help="With --config-key: keep only these points.")
@multi_option("--seq-len", "seq_lens", metavar="FAMILY",
              help="With --config-key: sequence families (1k1k, 8k1k or ISL_OSL).")
@multi_option("--config-files", type=click.Path(path_type=Path),
              help="With --config-key: master config files (default: REPO/configs/*-master.yaml).")
@click.option("--runner-config", type=click.Path(path_type=Path),
              help="With --config-key: runners file (default: REPO/configs/runners.yaml).")
@click.option("--repo", type=click.Path(file_okay=False, path_type=Path), default=Path("."),
              show_default=True, help="Repository root holding benchmarks/multi_node/srt-slurm/.")
@SRT_SLURM_OPTION
@click.option("--client", default=workload.DEFAULT_CLIENT, show_default=True,
              help="How the benchmark step starts infersweep inside the engine container: "
                   "CLIENT bench serve, or CLIENT serve when CLIENT ends with the bundle's .pyz "
                   "file (python3 /path/infersweep-bench.pyz; see `bench bundle`).")
@click.option("--result-dir", default=workload.DEFAULT_RESULT_DIR, show_default=True,
              help="Where the client writes <name>-c<conc>.json inside the job.")
@click.option("--format", "fmt", type=click.Choice(["yaml", "json"]), default="yaml",
              show_default=True, help="json adds the template and the list of points.")
@click.option("--output", type=click.Path(dir_okay=False, path_type=Path),
              help="Write to this file (atomically) instead of stdout; one row only.")
@MISSING_OPTION
def render(row_arg, config_key, conc, seq_lens, config_files, runner_config, repo, srt_slurm,
           client, result_dir, fmt, output, missing):
    """Print the recipe `srtctl apply` runs for a matrix row, checked against its schema.

    The row's CONFIG_FILE=recipes/<path>[:selector] setting names the template
    (benchmarks/multi_node/srt-slurm/<path>) or, when there is none, the recipe
    <path> of the --srt-slurm checkout (one variant of an override file); the benchmark
    section is generated from the row: one `infersweep bench serve` per concurrency,
    10 x conc prompts, 2 x conc warm-ups.
    """
    if (row_arg is None) == (config_key is None):
        raise click.UsageError("give exactly one of --row and --config-key")
    if row_arg is not None and (conc or seq_lens or config_files or runner_config):
        raise click.UsageError("--conc, --seq-len, --config-files and --runner-config "
                               "select rows of --config-key; a --row is rendered as it is")
    try:
        words = shlex.split(client)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--client") from None
    if not words:
        raise click.BadParameter("must name a command", param_hint="--client")
    if not result_dir.startswith("/"):
        raise click.BadParameter("must be an absolute path inside the job's container",
                                 param_hint="--result-dir")
    if srt_slurm is not None:
        check_checkout(srt_slurm)
    if config_key is not None:
        rows = _rows_from_catalog(config_key, conc, seq_lens, config_files, runner_config, repo)
        source = config_key
    else:
        rows, source = _rows_from_option(row_arg)
    if output is not None and len(rows) != 1:
        raise InputError(Diagnostic(source, 0, 0, f"{len(rows)} rows to render but --output "
                                    "takes one", "narrow the selection (e.g. --conc) or print "
                                    "to stdout", "row-select"))
    rendered, problems = [], []
    for row in rows:
        try:
            rendered.append(render_row(row, repo, source=source, client=client,
                                       result_dir=result_dir, srt_slurm=srt_slurm,
                                       missing=missing))
        except InputError as exc:
            problems.extend(exc.diagnostics)
    if problems:
        raise InputError(problems)
    if fmt == "json":
        items = [r.as_json() for r in rendered]
        text = json.dumps(items[0] if len(items) == 1 else items, indent=2) + "\n"
    else:
        text = "---\n".join(r.text() for r in rendered)
    if output is None:
        sys.stdout.write(text)
    else:
        write_atomic(output, text)


@recipe.command("diff")
@click.argument("a", type=click.Path(path_type=Path))
@click.argument("b", type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True)
@click.option("--exit-code", is_flag=True, help="Exit 1 when the recipes differ.")
def diff(a, b, fmt, exit_code):
    """Semantic differences between recipes A and B (formatting and key order ignored).

    Compared: model and image, topology, backend options per role (as the worker receives
    them), front end, benchmark (client, points, options), Slurm limits and the environment
    of each process. Templates compare too (placeholders as written).
    """
    docs, problems = [], []
    for path in (a, b):
        try:
            doc = load_yaml(path)
        except InputError as exc:
            problems.extend(exc.diagnostics)
            continue
        if not isinstance(doc.data, dict):
            problems.append(Diagnostic(str(path), 1, 1, "a recipe must be a YAML mapping",
                                       rule="recipe"))
        docs.append(doc)
    if problems:
        raise InputError(problems)
    found = differ.differences(docs[0].data, docs[1].data)
    if fmt == "json":
        sys.stdout.write(json.dumps({"a": str(a), "b": str(b), "same": not found,
                                     "differences": [d.as_json() for d in found]},
                                    indent=2) + "\n")
    else:
        sys.stdout.write(differ.text_report(found, str(a), str(b)))
    if exit_code and found:
        sys.exit(1)


@recipe.command("check")
@click.argument("files", nargs=-1, type=click.Path(path_type=Path))
@click.option("--kind", type=click.Choice(checks.KINDS), default="auto", show_default=True,
              help="auto: a file with a benchmark command and no {{ row.* }} placeholder is a "
                   "rendered recipe, anything else a template.")
@click.option("--repo", type=click.Path(file_okay=False, path_type=Path), default=Path("."),
              show_default=True, help="Repository root (used when no FILES are given).")
@SRT_SLURM_OPTION
def check(files, kind, repo, srt_slurm):
    """Validate recipe templates and rendered recipes; list every error, exit 1 on any.

    Without FILES: every template under benchmarks/multi_node/srt-slurm/, and every row of
    the catalog (configs/*-master.yaml) that names one must render (from the template, or
    from the --srt-slurm checkout's recipe).
    """
    if srt_slurm is not None:
        check_checkout(srt_slurm)
    problems, counts = [], {"template": 0, "recipe": 0}
    paths = list(files) or sorted((repo / TEMPLATE_ROOT).rglob("*.yaml"))
    if not paths:
        raise InputError(Diagnostic(str(repo / TEMPLATE_ROOT), 0, 0, "no templates to check",
                                    "give FILES, or --repo at the repository root", "io"))
    for path in paths:
        try:
            doc = load_yaml(path)
        except InputError as exc:
            problems.extend(exc.diagnostics)
            continue
        found_kind, found = checks.check(doc, kind)
        counts[found_kind] += 1
        problems.extend(found)
    rendered = 0
    if not files:
        rows = _catalog_rows_with_templates(repo)
        for key, row in rows:
            try:
                render_row(row, repo, source=key, srt_slurm=srt_slurm)
                rendered += 1
            except InputError as exc:
                problems.extend(exc.diagnostics)
    if problems:
        raise InputError(sorted(set(problems), key=lambda d: (d.path, d.line, d.col)))
    text = f"ok: {counts['template']} template(s), {counts['recipe']} recipe(s)"
    click.echo(text + (f", {rendered} catalog row(s) render" if not files else ""))


def _catalog_rows_with_templates(repo: Path) -> list[tuple[str, dict]]:
    from infersweep.config.catalog import default_config_files, default_runner_file, load_catalog
    from infersweep.matrix.generate import Selection, generate_keyed
    from infersweep.recipe.rowfit import settings

    files = default_config_files(repo)
    if not files:
        return []
    catalog = load_catalog(files, default_runner_file(repo), strict_runners=False)
    pairs = generate_keyed(catalog, Selection(evals="none"))
    return [(key, row) for key, row in pairs
            if any(CONFIG_FILE in settings(row.get(r) or {}) for r in ("prefill", "decode"))]


@recipe.command("coverage")
@multi_option("--config-files", type=click.Path(path_type=Path),
              help="Master config files (default: REPO/configs/*-master.yaml).")
@click.option("--runner-config", type=click.Path(path_type=Path),
              help="Runners file (default: REPO/configs/runners.yaml).")
@click.option("--repo", type=click.Path(file_okay=False, path_type=Path), default=Path("."),
              show_default=True, help="Repository root holding benchmarks/multi_node/srt-slurm/.")
@SRT_SLURM_OPTION
@click.option("--srtctl", "srtctl_dir", type=click.Path(exists=True, file_okay=False,
                                                         path_type=Path),
              help="An srt-slurm checkout whose srtctl dry-runs every rendered recipe of a "
                   "backend it has (its .venv, installed there when missing); also the "
                   "--srt-slurm checkout unless that is given.")
@click.option("--jobs", type=POSITIVE_INT, help="srtctl processes at a time [default: CPUs].")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table",
              show_default=True)
@MISSING_OPTION
@click.option("--scenario", type=click.Choice(["fixed-seq-len", "agentic-coding"]),
              default="fixed-seq-len", show_default=True,
              help="Which scenario's rows to cover (the other scenarios are counted apart).")
@progress.option()
def coverage_command(config_files, runner_config, repo, srt_slurm, srtctl_dir, jobs, fmt,
                     missing, scenario, no_progress):
    """Which rows of a catalog (fixed-seq-len, or --scenario agentic-coding) get a recipe,
    and does srtctl accept it?

    Every row is rendered as a launch renders it and reported as rendered (with the
    config's own template, or from the srt-slurm checkout) or refused, refusals grouped by
    reason (which file is missing, which setting is unknown, ...). With --srtctl, srtctl's
    own dry run judges every rendered recipe of a backend it has: accepted or rejected, with
    its message. Exit 0 whatever the figures; 1 on bad input.
    """
    from infersweep.config.catalog import default_config_files, default_runner_file
    from infersweep.recipe import coverage, coveragereport, srtctl

    files = list(config_files) or default_config_files(repo)
    if not files:
        raise InputError(Diagnostic(str(repo / "configs"), 0, 0, "no master config files",
                                    "give --config-files, or --repo at the repository root",
                                    "io"))
    runners = runner_config or default_runner_file(repo)
    checkout = srt_slurm or srtctl_dir
    if checkout is not None:
        lookup.check_checkout(checkout, "--srt-slurm" if srt_slurm else "--srtctl")
    judge = None
    if srtctl_dir is not None:
        judge = srtctl.locate(srtctl_dir, say=lambda text: click.echo(text, err=True))
    pairs, skipped = coverage.catalog_rows(files, runners, scenario)
    cov = coverage.run(pairs, repo, srt_slurm=checkout, srtctl=judge, skipped=skipped,
                       jobs=jobs, show_progress=not no_progress, missing=missing)
    commit = lookup.commit_of(checkout) if checkout is not None else None
    if fmt == "json":
        doc = coveragereport.as_json(cov, catalogs=files, runner_config=runners,
                                     srt_slurm=checkout, srt_slurm_commit=commit)
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
    else:
        sys.stdout.write(coveragereport.table(cov, catalogs=files, srt_slurm=checkout,
                                              srt_slurm_commit=commit, scenario=scenario))
