"""``infersweep pins``: check, verify and show the pinned runtime sources."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import click

from infersweep import ghactions, output
from infersweep.clitypes import POSITIVE_INT, FiniteFloat
from infersweep.diagnostics import Diagnostic, InputError, did_you_mean
from infersweep.redact import redact


@click.group()
def pins():
    """Pinned runtime sources (configs/runtimes.yaml): check, verify, show."""


def _lock_path(root: str, lock: str | None) -> Path:
    from infersweep.pins.lock import LOCK_PATH

    return Path(lock) if lock else Path(root) / LOCK_PATH


def _load(root: str, lock: str | None, *, strict: bool):
    from infersweep.pins.lock import lock_with_problems
    from infersweep.yamldoc import load_yaml

    path = _lock_path(root, lock)
    doc = load_yaml(path)
    parsed = lock_with_problems(doc)
    parsed.problems = [_redacted(d) for d in parsed.problems]  # they may quote a URL
    if not parsed.pins or (strict and parsed.problems):
        raise InputError(parsed.problems or [Diagnostic(str(path), 0, 0, "no pins",
                                                        rule="schema")])
    return parsed


def _redacted(diag: Diagnostic) -> Diagnostic:
    return dataclasses.replace(diag, message=redact(diag.message), hint=redact(diag.hint))


def _check_names(names, known, what: str, path: str) -> None:
    bad = [n for n in names if n not in known]
    if bad:
        raise InputError([Diagnostic(path, 0, 0, f"{what} '{n}' is not pinned in the lock",
                                     did_you_mean(n, known) or
                                     f"pinned: {', '.join(sorted(known))}", "pins-usage")
                          for n in bad])


@pins.command()
@click.option("--root", default=".", show_default=True, type=click.Path(file_okay=False),
              help="Repository root to scan.")
@click.option("--lock", default=None, type=click.Path(dir_okay=False),
              help="Lock file (default: <root>/configs/runtimes.yaml).")
@click.option("-v", "--verbose", is_flag=True, help="Also list every reference that matches.")
@click.option("--strict", is_flag=True,
              help="Fail on every file that could not be scanned, not only on those that "
                   "could hold a pin (unreadable, or too large and naming a pinned source).")
@click.option("--max-file-size", type=POSITIVE_INT, default=2 * 2**20, show_default=True,
              metavar="BYTES", help="Larger files are not scanned (see --strict).")
@output.output_format_option
def check(root, lock, verbose, strict, max_file_size):
    """Fail on short or malformed SHAs in the lock and on any other commit named for a pinned
    source anywhere in the repository (changelog, recipes, docs, launchers, workflows)."""
    from infersweep.pins.check import check as run_check

    report = run_check(root, lock, strict=strict, max_bytes=max_file_size)
    if verbose:
        for ref in report.references:
            click.echo(f"{ref.path}:{ref.line}:{ref.col}: {ref.token} matches the "
                       f"{', '.join(ref.sources)} pin")
    flagged = {d.path for d in report.problems if d.rule == "pins-unscanned"}
    output.warn(Diagnostic(u.path, 0, 0, f"not scanned for pinned commits: {u.reason}",
                           "it names no pinned source; --strict makes this an error")
                for u in report.unscanned if u.path not in flagged)
    if report.problems:
        raise InputError(report.problems)
    n = len(report.lock.pins) if report.lock else 0
    skipped = (f"; {len(report.unscanned)} file{'s' if len(report.unscanned) != 1 else ''} "
               "not scanned (see the warnings)") if report.unscanned else ""
    click.echo(f"pins check: {n} pin{'s' if n != 1 else ''} well formed; "
               f"{len(report.references)} reference{'s' if len(report.references) != 1 else ''}"
               f" in {report.files} scanned files match the lock{skipped}")


def _parse_remotes(values) -> dict[str, str]:
    out = {}
    for value in values:
        name, sep, url = value.partition("=")
        if not sep or not name or not url:
            raise click.BadParameter(f"'{redact(value)}' is not NAME=URL", param_hint="--remote")
        out[name.strip()] = url.strip()
    return out


_HINTS = {
    "remote-unreachable": "check the URL and the network; a private repository needs "
                          "credentials in the runner's git configuration",
    "commit-not-found": "push the commit to a branch or, safer, an immutable tag (the lock's "
                        "'ref'), or pin a commit that is published",
    "changed": "the index now serves another file under the pinned version: do not install "
               "it; find out why, then pin the new file and regenerate its lock",
    "not-found": "the pinned version is gone from the index (yanked or deleted): pin a "
                 "published version and regenerate its lock",
    "unreachable": "check the package index (pip's configuration) and the network",
}


@pins.command()
@click.option("--root", default=".", show_default=True, type=click.Path(file_okay=False))
@click.option("--lock", default=None, type=click.Path(dir_okay=False),
              help="Lock file (default: <root>/configs/runtimes.yaml).")
@click.option("--remote", "remotes", multiple=True, metavar="NAME=URL",
              help="Fetch NAME from URL instead of the lock's repository (a mirror, or a "
                   "local repository in tests). Also: $INFERSWEEP_PIN_URL_<NAME>.")
@click.option("--only", "only", multiple=True, metavar="NAME", help="Verify only these pins.")
@click.option("--timeout", default=60.0, show_default=True, type=FiniteFloat(min=1),
              help="Seconds allowed per pin.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True, help="json: the results as a JSON list on stdout.")
@click.option("--json", "as_json", is_flag=True, hidden=True,
              help="The old spelling of --format json.")
@click.option("--find-links", "find_links", default=None, metavar="DIR",
              type=click.Path(file_okay=False, exists=True),
              help="Look for pinned distributions (packages:) in this folder of wheels only, "
                   "not on the package index (a mirror, or tests).")
@click.option("--step-summary", envvar="GITHUB_STEP_SUMMARY", default=None,
              help="Append a markdown table here (default: $GITHUB_STEP_SUMMARY).")
def verify(root, lock, remotes, only, timeout, find_links, fmt, as_json, step_summary):
    """Prove each pinned commit is fetchable from its remote (scratch repo, shallow fetch by
    SHA, cat-file), and each pinned distribution is still on its index with the pinned sha256,
    before any GPU job depends on them."""
    from infersweep.pins.lock import sha_problem
    from infersweep.pins.packages import verify_package
    from infersweep.pins.verify import OK, SKIPPED, Result, verify_pins

    as_json = as_json or fmt == "json"
    ghactions.check_targets({"--step-summary": step_summary})
    parsed = _load(root, lock, strict=False)
    overrides = _parse_remotes(remotes)
    _check_names(only, {**parsed.pins, **parsed.packages}, "--only", parsed.path)
    _check_names(overrides, parsed.pins, "--remote", parsed.path)
    selected = [p for p in parsed.pins.values() if not only or p.name in only]
    results = verify_pins(selected, overrides=overrides, timeout=timeout)
    index_args = ["--no-index", "--find-links", find_links] if find_links else None
    for pkg in parsed.packages.values():
        if only and pkg.name not in only:
            continue
        got = verify_package(pkg, index_args=index_args, timeout=max(timeout, 60))
        selected.append(pkg)
        results.append(Result(pkg.name, f"pypi:{pkg.distribution}", pkg.version,
                              OK if got.ok else got.status, got.message, got.seconds))

    if as_json:
        click.echo(json.dumps([r.to_dict() for r in results], indent=2))
    if step_summary:
        _write_summary(step_summary, results)
    problems = []
    for pin, r in zip(selected, results, strict=True):
        if not as_json:
            mark = {OK: "ok", SKIPPED: "skip"}.get(r.status, "FAIL")
            click.echo(f"{mark:<5} {r.name:<12} {r.commit[:12] or '-':<12} {r.repository} "
                       f"({r.seconds:.1f} s)")
        if r.ok:
            continue
        hint = _HINTS.get(r.status, "")
        if not hint and hasattr(pin, "commit"):
            problem = sha_problem(pin.commit)
            hint = problem[2] if problem else ""
        problems.append(Diagnostic(parsed.path, pin.line, pin.col, f"{pin.name}: {r.message}",
                                   hint, f"pin-{r.status}"))
    if problems:
        raise InputError(problems)
    if not as_json:
        commits = [r for pin, r in zip(selected, results, strict=True) if hasattr(pin, "commit")]
        dists = [r for pin, r in zip(selected, results, strict=True)
                 if not hasattr(pin, "commit")]
        parts = []
        if commits or not dists:
            parts.append(f"{sum(r.status == OK for r in commits)} of {len(commits)} pinned "
                         "commits fetchable")
        if dists:
            parts.append(f"{sum(r.status == OK for r in dists)} of {len(dists)} pinned "
                         "distributions as pinned on the index")
        click.echo("pins verify: " + "; ".join(parts))


def _write_summary(path: str, results) -> None:
    lines = ["### Pinned commits", "", "| pin | commit | repository | result |", "|---|---|---|---|"]
    for r in results:
        verdict = "✅ fetchable" if r.status == "ok" else (
            "⏭️ skipped" if r.ok else f"❌ {r.message}".replace("|", "\\|"))
        lines.append(f"| `{r.name}` | `{r.commit or '-'}` | {r.repository} | {verdict} |")
    ghactions.add_summary("\n".join(lines), path)


@pins.command()
@click.argument("name", required=False)
@click.option("--root", default=".", show_default=True, type=click.Path(file_okay=False))
@click.option("--lock", default=None, type=click.Path(dir_okay=False))
@click.option("--field", "field_name", default=None,
              type=click.Choice(["repository", "commit", "ref", "recipe-dialect", "distribution",
                                 "version", "sha256", "lock", "requires-python"]),
              help="Print one field of NAME (for launchers: `--field commit`).")
@click.option("--format", "fmt", type=click.Choice(["json", "env"]), default="json",
              show_default=True, help="env: NAME_FIELD=value lines, e.g. SRT_SLURM_COMMIT=...")
def show(name, root, lock, field_name, fmt):
    """Print the pins (all, or NAME) so scripts read them instead of copying them: pinned
    commits, and pinned Python distributions (``packages:``)."""
    parsed = _load(root, lock, strict=True)
    known = {**parsed.pins, **parsed.packages}
    names = [name] if name else list(known)
    _check_names(names, known, "pin", parsed.path)
    rows = {}
    for n in names:
        if n in parsed.pins:
            p = parsed.pins[n]
            rows[n] = {"repository": p.repository, "commit": p.commit, "ref": p.ref,
                       "recipe-dialect": p.recipe_dialect or ""}
        else:
            k = parsed.packages[n]
            rows[n] = {"distribution": k.distribution, "version": k.version,
                       "sha256": " ".join(k.sha256), "lock": k.lock,
                       "requires-python": k.requires_python}
    if field_name:
        if not name:
            raise click.UsageError("--field needs a pin NAME")
        if field_name not in rows[name]:
            raise click.UsageError(f"pin '{name}' has no field '{field_name}' "
                                   f"(it has: {', '.join(rows[name])})")
        click.echo(rows[name][field_name])
        return
    if fmt == "env":
        for n, row in rows.items():
            prefix = re.sub(r"[^A-Za-z0-9]", "_", n).upper()
            for key, value in row.items():
                click.echo(f"{prefix}_{re.sub(r'[^A-Za-z0-9]', '_', key).upper()}={value}")
        return
    click.echo(json.dumps(rows if not name else rows[name], indent=2))
