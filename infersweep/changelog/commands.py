"""`infersweep changelog check|matrix`: the PR gate and the changelog-driven matrix."""

from __future__ import annotations

import json
import os
import tempfile
from collections import Counter
from pathlib import Path

import click
from tabulate import tabulate

from infersweep import ghactions, output
from infersweep.atomic import check_writable, write_atomic
from infersweep.changelog import buckets, shards
from infersweep.changelog.change import CHANGELOG, load_change
from infersweep.changelog.history import FETCH_OPTION
from infersweep.changelog.process import Modifiers, build_matrix
from infersweep.clitypes import POSITIVE_INT
from infersweep.diagnostics import Diagnostic, InputError


def _refs(f):
    for option in reversed([
        click.option("--base-ref", help="The PR's base (e.g. origin/main)."),
        click.option("--head-ref", help="The PR's head commit."),
        click.option("--decision", "decision_json", metavar="PATH|-|JSON",
                     help="A `policy decide` decision (a file, - for stdin, or the JSON "
                          "text); supplies refs and modifiers."),
        click.option("--changelog-file", default=CHANGELOG, show_default=True),
        click.option("--repo", "root", type=click.Path(path_type=Path, file_okay=False),
                     default=Path("."), help="Repository root (default: current directory)."),
        click.option("--pr-number", type=POSITIVE_INT,
                     help="When given, appended pr-links must name this PR (or XXX)."),
        click.option(FETCH_OPTION, "fetch_missing", is_flag=True,
                     help="Fetch missing refs from the remote and deepen a shallow clone "
                          "until the merge-base is in it (CI checkouts are one commit deep)."),
        click.option("--working-tree", is_flag=True,
                     help="Judge the changelog and catalog as they are in the working tree "
                          "(uncommitted edits included) instead of --head-ref."),
    ]):
        f = option(f)
    return f


@click.group()
def changelog():
    """The append-only perf changelog: gate a PR, build its sweep matrix."""


def _from_decision(decision_json, base_ref, head_ref, refs_needed: bool = True,
                   head_needed: bool = True):
    """(base, head, decision dict) from explicit refs or a policy decision."""
    decision = {}
    if decision_json:
        from infersweep.policy.decision_input import load_decision

        decision = load_decision(decision_json)
        base_ref = base_ref or decision.get("diff-base")
        if head_needed:  # --working-tree: the head is the working tree, never the decision's
            head_ref = head_ref or decision.get("diff-head")
    if refs_needed and (not base_ref or (head_needed and not head_ref)):
        raise click.UsageError("give --base-ref and --head-ref (or a --decision that has them)"
                               if head_needed else "give --base-ref (or a --decision that "
                               "has it)")
    return base_ref, head_ref, decision


def _check_output(path: Path | None, option: str) -> None:
    """Refuse an output path that cannot be written, before any work is done."""
    if path is not None:
        check_writable(path, option)


def _write_all(files: list[tuple[Path, str, str]]) -> None:
    """Write every (path, text, option) or, if one fails, none of them."""
    done: list[Path] = []
    for path, text, option in files:
        try:
            write_atomic(path, text)
        except OSError as exc:
            for written in done:
                written.unlink(missing_ok=True)
            raise InputError(Diagnostic(str(path), 0, 0, f"cannot write {option}: "
                                        f"{exc.strerror or exc}", "nothing was written",
                                        "output-path")) from None
        done.append(path)


def _warn(change):
    output.warn(change.warnings)


WORKING_TREE = "the working tree"


def _load(root, base_ref, head_ref, changelog_file, pr_number, fetch_missing, working_tree,
          **kwargs):
    """:func:`load_change`, on a snapshot of the working tree when asked; otherwise with a
    first line that says so when the files it judges have uncommitted changes."""
    from infersweep.changelog import worktree

    if working_tree:
        if head_ref not in (None, "HEAD"):
            raise click.UsageError("--working-tree judges the working tree on top of HEAD; "
                                   f"drop --head-ref {head_ref}")
        snap = worktree.snapshot(root, changelog_file)
        return load_change(root, base_ref, snap, changelog_file, pr_number,
                           fetch_missing=fetch_missing, head_label=WORKING_TREE, **kwargs)
    try:
        change = load_change(root, base_ref, head_ref, changelog_file, pr_number,
                             fetch_missing=fetch_missing, **kwargs)
    except InputError as exc:
        about_git = any(d.rule.startswith("git") for d in exc.diagnostics)
        first = None if about_git else worktree.note(root, head_ref, changelog_file, error=True)
        if first is None:
            raise
        raise InputError([first, *exc.diagnostics]) from None
    late = worktree.note(root, head_ref, changelog_file, error=False)
    if late is not None:
        change.warnings.insert(0, late)
    return change


@changelog.command()
@_refs
@output.output_format_option
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True, help="json: the appended entries as one object on stdout.")
def check(base_ref, head_ref, decision_json, changelog_file, root, pr_number, fetch_missing,
          working_tree, fmt):
    """Fail unless the head only appends valid entries whose keys exist at the head.

    The head is a commit (--head-ref): uncommitted edits are not judged, and the check says
    so first when the changelog or the catalog has any; --working-tree judges them.
    """
    base_ref, head_ref, decision = _from_decision(decision_json, base_ref, head_ref,
                                                  head_needed=not working_tree)
    pr_number = pr_number or decision.get("pr-number")
    change = _load(root, base_ref, head_ref, changelog_file, pr_number, fetch_missing,
                   working_tree)
    _warn(change)
    entries = [{"line": change.appended.doc.locate((i,))[0], "config-keys": keys,
                "scenarios": e.get("scenario-type") or ["all"],
                "mode": "append-only" if e.get("append-only") else "evals-only"
                if e.get("evals-only") else "all-evals" if e.get("all-evals") else "full"}
               for i, (e, keys) in enumerate(zip(change.entries, change.keys, strict=True))]
    rows = [[e["line"], ", ".join(e["config-keys"]), ", ".join(e["scenarios"]), e["mode"]]
            for e in entries]
    table = tabulate(rows, headers=["line", "config keys", "scenarios", "mode"],
                     tablefmt="github")
    where = f" in {WORKING_TREE}" if working_tree else ""
    if fmt == "json":
        click.echo(json.dumps({"ok": True, "changelog": changelog_file,
                               "base-commit": change.base_commit,
                               "head-commit": change.head_commit,
                               "working-tree": bool(working_tree), "entries": entries},
                              indent=2))
        ghactions.add_summary(f"### Changelog check\n\n{table}")
        return
    click.echo(f"ok: {len(rows)} entr{'y' if len(rows) == 1 else 'ies'} appended to "
               f"{changelog_file}{where} since {change.base_commit[:12]}\n{table}")
    ghactions.add_summary(f"### Changelog check\n\n{table}")


@changelog.command()
@_refs
@output.output_format_option
@click.option("--trim-conc", is_flag=True, help="Keep only the lowest point of each curve.")
@click.option("--all-evals", is_flag=True, help="Evaluate every eligible point.")
@click.option("--evals-only", is_flag=True, help="Run evals, no throughput.")
@click.option("--canary/--no-canary", default=False,
              help="Split off the cheapest throughput point to run first (job outputs).")
@click.option("--job-outputs", is_flag=True,
              help="Write run-sweep's job list to $GITHUB_OUTPUT: row ids in shards of at "
                   "most 256 per matrix (needs --rows-out).")
@click.option("--rows-out", type=click.Path(path_type=Path, dir_okay=False),
              help="Write every row, by id, to this file (run-sweep uploads it as an "
                   "artifact; each benchmark job reads its row with `changelog row`).")
@click.option("--metadata-out", type=click.Path(path_type=Path, dir_okay=False),
              help="Write the changelog metadata (for ingestion) to this file.")
@click.option("--srt-slurm", "srt_slurm", type=click.Path(file_okay=False, path_type=Path),
              default=None, help="An srt-slurm checkout in which rows naming a recipe that "
                                 "is no template of ours find it (as the launcher does).")
@click.option("--fetch-srt-slurm", is_flag=True,
              help="When a row's recipe lives in srt-slurm, fetch the commit pinned in "
                   "configs/runtimes.yaml to find it (what run-sweep's setup job does).")
@click.option("--dispatch", "dispatch_json", default="", metavar="JSON",
              help="workflow_dispatch inputs (config-keys, seq-lens, conc, eval-mode): build "
                   "the matrix from this selection instead of the changelog. Empty = unused.")
def matrix(base_ref, head_ref, decision_json, changelog_file, root, pr_number, fetch_missing,
           working_tree, trim_conc, all_evals, evals_only, canary, job_outputs, rows_out, metadata_out,
           srt_slurm, fetch_srt_slurm, dispatch_json):
    """The bucketed sweep matrix for the entries the head appends (JSON on stdout).

    Formatting problems are warnings here (`changelog check` is the gate); the run is
    planned from the entries.
    """
    if job_outputs and rows_out is None:
        raise click.UsageError("--job-outputs needs --rows-out: the job outputs carry only "
                               "row ids, the rows themselves go to that file")
    dispatching = dispatch_json.strip() not in ("", "null", "{}")
    base_ref, head_ref, decision = _from_decision(decision_json, base_ref, head_ref,
                                                  refs_needed=not dispatching,
                                                  head_needed=not working_tree)
    _check_output(rows_out, "--rows-out")
    _check_output(metadata_out, "--metadata-out")
    trim_conc = trim_conc or bool(decision.get("trim-conc"))
    all_evals = all_evals or bool(decision.get("all-evals"))
    evals_only = evals_only or bool(decision.get("evals-only"))
    canary = canary or bool(decision.get("canary"))
    if dispatching:
        result = _dispatch_result(dispatch_json, root)
    else:
        change = _load(root, base_ref, head_ref, changelog_file, pr_number, fetch_missing,
                       working_tree, strict_layout=False)
        _warn(change)
        result = build_matrix(change, Modifiers(trim_conc, all_evals, evals_only), root)
    plan, held = None, Counter()
    if rows_out or job_outputs:
        from infersweep.changelog import launchable, pinnedrecipes
        from infersweep.recipe.grouping import grouped_rows
        from infersweep.recipe.lookup import check_checkout

        # single-node rows that start the same server become one job (one engine start)
        requested = {name: grouped_rows(rows, Path(root or "."))
                     for name, rows in buckets.job_outputs(result).items()}
        shards.plan(requested)  # the whole request must fit GitHub's limits, runnable or not
        with tempfile.TemporaryDirectory(prefix="infersweep-srt-slurm-") as tmp:
            if srt_slurm is not None:
                check_checkout(srt_slurm)
            elif fetch_srt_slurm and pinnedrecipes.needed(requested, Path(root or ".")):
                srt_slurm = pinnedrecipes.fetch_pinned(
                    Path(root or "."), Path(tmp), dict(os.environ),
                    say=lambda line: click.echo(line, err=True))
            launch = launchable.split(requested, Path(root or "."), srt_slurm=srt_slurm)
        outputs = launch.rows
        first = buckets.take_canary(outputs) if canary else None
        side = "multi-node" if first and first.get("prefill") is not None else "single-node"
        outputs[f"canary-{side}"] = [first] if first else []
        plan = shards.plan(outputs, timeout_of=launch.timeout_of, not_run=launch.refused)
        refused = launch.refused
        held = Counter(name for name, _, _ in launch.refused)  # job output -> rows not run
        output.warn([Diagnostic("<sweep>", 0, 0, f"not run: {shards.title(row)} "
                                f"({name}): {why}", "the gate counts its points as missing",
                                "row-not-launchable")
                     for name, row, why in refused], title="row not launched", err=True)
    files = []
    if rows_out:
        files.append((rows_out, plan.rows_document(), "--rows-out"))
    if metadata_out:
        files.append((metadata_out, json.dumps(result["changelog_metadata"], indent=2) + "\n",
                      "--metadata-out"))
    _write_all(files)
    click.echo(json.dumps(result, separators=(",", ":")))
    if job_outputs:
        from infersweep.changelog.gitrefs import head_commit

        ghactions.set_outputs({**plan.outputs, "ref": head_commit(Path(root or "."))})
        summary = [[name, n, k, held.get(name, 0)] for name, (n, k) in plan.counts.items()]
        text = "### Sweep matrix\n\n" + tabulate(
            summary, headers=["job", "rows", "shards", "not run"], tablefmt="github")
        if plan.not_run:
            text += "\n\n### Rows not launched\n\n" + tabulate(
                [[k, shards.title(v["row"]), v["reason"]] for k, v in plan.not_run.items()],
                headers=["id", "row", "why"], tablefmt="github")
        ghactions.add_summary(text)


@changelog.command()
@click.option("--from", "rows_file", required=True, metavar="FILE",
              help="A rows file written by `changelog matrix --rows-out`.")
@click.option("--id", "row_id", required=True, help="The row's id (from the job list).")
def row(rows_file, row_id):
    """Print one matrix row by id; also sets the step output `row` in GitHub Actions."""
    found = json.dumps(shards.read_row(rows_file, row_id), separators=(",", ":"))
    click.echo(found)
    ghactions.set_outputs({"row": found})



def _words(text) -> list[str]:
    return [w for w in str(text or "").replace(",", " ").split() if w]


def _dispatch_result(text: str, root) -> dict:
    """The matrix of a manual run's inputs (see infersweep/changelog/dispatch.py)."""
    from infersweep.changelog.dispatch import dispatch_matrix
    from infersweep.matrix.commands import catalog_from_options

    try:
        inputs = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(Diagnostic("--dispatch", exc.lineno, exc.colno,
                                    f"invalid JSON: {exc.msg}", "pass the workflow's inputs "
                                    "as JSON (toJSON(inputs))", "dispatch")) from None
    if not isinstance(inputs, dict) or not _words(inputs.get("config-keys")):
        raise InputError(Diagnostic("--dispatch", 0, 0, "the dispatch inputs name no config "
                                    "keys", "set the config-keys input (keys or globs)",
                                    "dispatch"))
    concs = []
    for w in _words(inputs.get("conc")):
        if not w.isdigit() or int(w) < 1:
            raise InputError(Diagnostic("--dispatch", 0, 0, f"conc: '{w}' is not a positive "
                                        "integer", "e.g. '4 8 16'", "dispatch"))
        concs.append(int(w))
    here = Path(root or ".")
    files = sorted((here / "configs").glob("*-master.yaml"))
    catalog = catalog_from_options(files, here / "configs" / "runners.yaml")
    return dispatch_matrix(catalog, config_keys=_words(inputs.get("config-keys")),
                           seq_lens=_words(inputs.get("seq-lens")), conc=concs,
                           eval_mode=str(inputs.get("eval-mode") or "default"))
