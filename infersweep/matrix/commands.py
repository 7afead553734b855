"""`infersweep matrix full-sweep|test-config` and `infersweep explain KEY`."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

import click

from infersweep.clicompat import multi_option
from infersweep.clitypes import POSITIVE_INT
from infersweep.config.catalog import default_config_files, default_runner_file, load_catalog
from infersweep.diagnostics import Diagnostic, InputError
from infersweep.matrix.generate import SCENARIO_TYPES, Selection, generate_keyed, select_keys
from infersweep.matrix.table import explain_data, explain_table, matrix_table


class SeqFamily(click.ParamType):
    """A sequence family: a name (1k1k, 8k1k) or ISL_OSL with positive token counts."""

    name = "family"

    def convert(self, value, param, ctx):
        from infersweep.matrix.points import SEQ_FORM, is_seq_family

        if is_seq_family(value):
            return value
        self.fail(f"{value!r} is not a sequence family: {SEQ_FORM}", param, ctx)


def split_commas(ctx, param, values):
    """``--config-keys a,b`` as ``--config-keys a --config-keys b`` (no key or glob has a
    comma); an empty item (``a,,b``, a trailing comma) is a usage error, not a silent skip."""
    out = []
    for value in values or ():
        parts = [p.strip() for p in str(value).split(",")]
        if any(not p for p in parts):
            raise click.BadParameter(f"{value!r} has an empty item; separate keys with single "
                                     "commas, or repeat the option", ctx, param)
        out.extend(parts)
    return tuple(out)


STEP_SIZE = click.IntRange(min=2)  # a range multiplied by 1 would never end


def selection_options(f):
    """The row-selection options every expanding command shares (all but --format)."""
    options = [
        multi_option("--config-files", type=click.Path(path_type=Path),
                     help="Master config files (default: configs/*-master.yaml)."),
        click.option("--runner-config", type=click.Path(path_type=Path),
                     help="Runners file (default: configs/runners.yaml)."),
        click.option("--no-evals", is_flag=True, help="Mark no row for evals."),
        click.option("--evals-only", is_flag=True, help="Emit only the rows that run evals."),
        click.option("--all-evals", is_flag=True,
                     help="Every eligible row runs evals (implies --evals-only)."),
        click.option("--runner-node-filter", metavar="TEXT",
                     help="Expand labels to the runners whose name contains TEXT."),
        multi_option("--scenario-type", type=click.Choice(SCENARIO_TYPES)),
        multi_option("--seq-lens", type=SeqFamily(),
                     help="Sequence families: 1k1k, 8k1k or ISL_OSL."),
        click.option("--step-size", type=STEP_SIZE, default=2, show_default=True,
                     help="Multiplier between points of a concurrency range."),
    ]
    for option in reversed(options):
        f = option(f)
    return f


def _common(f):
    return selection_options(click.option(
        "--format", "fmt", type=click.Choice(["json", "table"]), default="json",
        show_default=True)(f))


def config_key_options(f):
    """`matrix test-config`'s own selection options: --config-keys and --conc."""
    f = multi_option("--conc", type=POSITIVE_INT, help="Keep only these concurrencies.")(f)
    return multi_option("--config-keys", required=True, callback=split_commas,
                        help="Config keys or globs (* and ?): several after the option, "
                             "comma-separated, or the option repeated.")(f)


def test_config_selection(*, config_keys, conc, seq_lens, scenario_type, step_size,
                          runner_node_filter, no_evals, evals_only, all_evals) -> Selection:
    return Selection(
        config_keys=list(config_keys), conc=list(conc) or None,
        seq_lens=list(seq_lens) or None, scenario_types=list(scenario_type) or None,
        step_size=step_size, runner_node_filter=runner_node_filter,
        include_label_in_node_filter=True,
        evals=_eval_mode(no_evals, evals_only, all_evals), all_evals=all_evals)


def catalog_from_options(config_files, runner_config):
    files = list(config_files) or default_config_files()
    catalog = load_catalog(files, runner_config or default_runner_file(), strict_runners=False)
    for w in catalog.warnings:
        click.echo(f"warning: {w}", err=True)
    return catalog


def _eval_mode(no_evals, evals_only, all_evals):
    if no_evals and evals_only:
        raise click.UsageError("--no-evals and --evals-only are mutually exclusive")
    if no_evals and all_evals:
        raise click.UsageError("--all-evals cannot be combined with --no-evals")
    return "none" if no_evals else "only" if (evals_only or all_evals) else "default"


def _emit(pairs, fmt):
    if not pairs:
        click.echo("warning: the selection produced no rows (check the filters, e.g. --conc "
                   "values must be points the config declares)", err=True)
    if fmt == "table":
        click.echo(matrix_table(pairs))
    else:
        sys.stdout.write(json.dumps([row for _, row in pairs]))
        sys.stdout.write("\n")


@click.group()
def matrix():
    """Expand the config catalog into sweep-matrix rows (JSON on stdout)."""


@matrix.command("full-sweep")
@_common
@multi_option("--model-prefix", callback=split_commas,
              help="Keep config keys starting with these prefixes.")
@multi_option("--precision", callback=split_commas, help="Keep configs of these precisions.")
@multi_option("--framework", callback=split_commas, help="Keep configs of these frameworks.")
@multi_option("--runner-type", callback=split_commas,
              help="Keep configs whose runner label is one of these.")
@click.option("--min-conc", type=POSITIVE_INT)
@click.option("--max-conc", type=POSITIVE_INT)
@click.option("--max-tp", type=POSITIVE_INT, help="Skip single-node entries with a larger tp.")
@click.option("--max-ep", type=POSITIVE_INT, help="Clamp ep to this value.")
@click.option("--single-node", is_flag=True, help="Only single-node configs.")
@click.option("--multi-node", is_flag=True, help="Only multi-node configs.")
def full_sweep(config_files, runner_config, no_evals, evals_only, all_evals,
               runner_node_filter, scenario_type, seq_lens, step_size, fmt, model_prefix,
               precision, framework, runner_type, min_conc, max_conc, max_tp, max_ep,
               single_node, multi_node):
    """Every point of every config (optionally filtered)."""
    catalog = catalog_from_options(config_files, runner_config)
    both = not single_node and not multi_node
    sel = Selection(
        key_prefixes=list(model_prefix) or None, precisions=list(precision) or None,
        frameworks=list(framework) or None, runner_types=list(runner_type) or None,
        seq_lens=list(seq_lens) or None, scenario_types=list(scenario_type) or None,
        single_node=both or single_node, multi_node=both or multi_node,
        min_conc=min_conc, max_conc=max_conc, max_tp=max_tp, max_ep=max_ep,
        step_size=step_size, runner_node_filter=runner_node_filter,
        evals=_eval_mode(no_evals, evals_only, all_evals), all_evals=all_evals)
    _emit(generate_keyed(catalog, sel), fmt)


def check_named_points(catalog, sel: Selection) -> None:
    """A --conc or --seq-lens value that none of the named configs has is a usage error
    listing what they do have, not an empty matrix with exit 0."""
    from infersweep.matrix import points

    for option, bad, have in points.unmatched(catalog, sel):
        raise click.BadParameter(points.describe(option, bad, have, sel.config_keys or []),
                                 param_hint=f"'{option}'")


@matrix.command("test-config")
@_common
@config_key_options
def test_config(config_files, runner_config, fmt, **selection):
    """The points of the named configs (what a changelog entry runs)."""
    catalog = catalog_from_options(config_files, runner_config)
    sel = test_config_selection(**selection)
    check_named_points(catalog, sel)
    _emit(generate_keyed(catalog, sel), fmt)


@click.command()
@click.argument("key")
@multi_option("--config-files", type=click.Path(path_type=Path))
@click.option("--runner-config", type=click.Path(path_type=Path))
@click.option("--scenario-type", type=click.Choice(["fixed-seq-len", "agentic-coding"]),
              default=None, help="Only this scenario's rows.")
@click.option("--single-node", "only", flag_value="single", default=None,
              help="Only single-node configs.")
@click.option("--multi-node", "only", flag_value="multi", help="Only multi-node configs.")
@click.option("--repo", type=click.Path(file_okay=False, path_type=Path), default=Path("."),
              show_default=True, help="Repository root: its templates decide which points "
                                      "share an engine start.")
@click.option("--load-minutes", type=click.FloatRange(min=0), default=20.0,
              show_default=True, help="Estimate: minutes to load the model at each engine start.")
@click.option("--tpot-ms", type=click.FloatRange(min=0, min_open=True), default=20.0,
              show_default=True, help="Estimate: milliseconds per output token.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True, help="json: a list with one object per matching key.")
def explain(key, config_files, runner_config, scenario_type, only, repo, load_minutes, tpot_ms,
            fmt):
    """What a full sweep of config KEY runs and costs: jobs, engine starts, points, GPUs,
    nodes and node-hours.

    Single-node points that start the same server (same template settings once the row's
    and the concurrency's are applied) share a job and its engine start; the cost is shown
    next to InferenceX's scheme (one start per single-node point). KEY may be a glob ('dsv4*'): every
    matching key is explained, in catalog order, each exactly as if it were named alone,
    then the total.
    """
    from infersweep.matrix.table import CostModel, cost_line
    from infersweep.recipe.grouping import grouped_rows

    catalog = catalog_from_options(config_files, runner_config)
    keys = select_keys(catalog, [key])
    selection = Selection(scenario_types=[scenario_type] if scenario_type else None,
                          single_node=only != "multi", multi_node=only != "single")
    jobs = {k: grouped_rows([row for _, row in generate_keyed(
        catalog, replace(selection, config_keys=[k]))], repo) for k in keys}
    keys = [k for k in keys if jobs[k]]
    if not keys:
        raise InputError(Diagnostic(key, 0, 0, "no rows match the key and the filters",
                                    "drop --single-node/--multi-node/--scenario-type",
                                    "sweep-select"))
    cost = CostModel(load_minutes=load_minutes, tpot_ms=tpot_ms)
    data = [explain_data(k, catalog, jobs[k], cost) for k in keys]
    if fmt == "json":
        click.echo(json.dumps(data, indent=2))
        return
    tables = [explain_table(k, catalog, jobs[k], cost) for k in keys]
    if len(keys) > 1:
        tables.insert(0, f"{len(keys)} config keys match {key!r}: {', '.join(keys)}")
        tables.append(f"all {len(keys)} keys: {sum(len(d['points']) for d in data)} point(s) "
                      f"in {sum(d['jobs'] for d in data)} job(s); " + cost_line(
                          sum(d["engine-starts"] for d in data),
                          sum(d["inferencex-engine-starts"] for d in data),
                          sum(d["node-hours"] for d in data),
                          sum(d["inferencex-node-hours"] for d in data)))
    click.echo("\n\n".join(tables))
