"""Where a row's recipe comes from.

A multi-node row names its recipe as InferenceX does, ``CONFIG_FILE=recipes/<path>[:selector]``
in its prefill (or decode) additional-settings. The file is looked for

1. under our ``benchmarks/multi_node/srt-slurm/<path>`` (a template: the server described here,
   image, model and router from the row);
2. in the srt-slurm checkout, ``<checkout>/recipes/<path>`` (InferenceX's convention: its
   launchers run ``srtctl apply -f $CONFIG_FILE`` inside the checkout).

A multi-node row that names no ``CONFIG_FILE`` (InferenceX runs such rows with its own
scripts) gets its framework's disaggregated default,
``benchmarks/multi_node/srt-slurm/defaults/<framework>.yaml`` (an agentic-coding row's under
``.../srt-slurm/agentic/defaults/``): the topology, parallelism,
speculative decoding and KV transfer of the row, the engine's defaults for the rest. A row
whose named recipe exists nowhere is refused, unless the caller asks for the default in its
place (``missing=FALLBACK``: ``recipe coverage``/``recipe render --missing-recipe``), which is
then recorded as standing in for the named file.

A single-node row names no file: its template is found by InferenceX's naming of its
single-node scripts, ``<model-prefix>_<precision>_<gpu>_<framework>[_mtp]``, as

1. the config's own template ``benchmarks/single_node/srt-slurm/<that name>.yaml`` (its tuned
   engine settings), else
2. its framework's default template ``benchmarks/single_node/srt-slurm/defaults/<framework>.yaml``
   (sglang, vllm, atom, trt), which applies the row's parallelism, context and speculative
   decoding and refuses what it cannot express.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path

from infersweep import gitexec
from infersweep.diagnostics import Diagnostic, InputError
from infersweep.recipe import overrides, refusal, rowexpr, rowfit
from infersweep.recipe.rendered import DEFAULT, SRT_SLURM, TEMPLATE
from infersweep.recipe.settings import CONFIG_FILE, ROLES

TEMPLATE_ROOT = Path("benchmarks", "multi_node", "srt-slurm")
SINGLE_ROOT = Path("benchmarks", "single_node", "srt-slurm")
DEFAULTS = "defaults"
AGENTIC = "agentic"
CONFIG_PREFIX = "recipes/"
REFUSE, FALLBACK = "refuse", "framework-default"  # what to do when a named recipe is missing


@dataclass(frozen=True)
class Found:
    source: str  # TEMPLATE, DEFAULT or SRT_SLURM
    path: Path  # the file
    config_file: str  # the setting's value, as written
    selector: str | None
    checkout: Path | None = None  # for SRT_SLURM
    replaces: str | None = None  # the CONFIG_FILE a default stands in for (missing=FALLBACK)


def is_multi_node(row: dict) -> bool:
    return isinstance(row.get("prefill"), dict) or isinstance(row.get("decode"), dict)


def config_file(row: dict, source: str) -> str:
    """The row's ``CONFIG_FILE`` value (one, of the form ``recipes/<path>[:selector]``)."""
    label = rowfit.row_label(row)
    found = {}
    for role in ROLES:
        value = rowfit.settings(row.get(role) or {}).get(CONFIG_FILE)
        if value is not None:
            found[role] = value
    if not found:
        raise refusal.RowRefused(Diagnostic(
            source, 0, 0, f"row ({label}) names no recipe template",
            "add CONFIG_FILE=recipes/<path>.yaml to the search-space entry's prefill "
            "additional-settings in the master config", "row-template"),
            refusal.NO_CONFIG_FILE, str(row.get("framework")))
    if len(set(found.values())) > 1:
        raise InputError(Diagnostic(
            source, 0, 0, f"row ({label}) names two templates: "
            + ", ".join(f"{r} {v}" for r, v in found.items()), "keep one CONFIG_FILE",
            "row-template"))
    value = next(iter(found.values()))
    path, _ = overrides.split(value)
    if not path.startswith(CONFIG_PREFIX) or ".." in Path(path).parts:
        raise refusal.RowRefused(Diagnostic(
            source, 0, 0, f"CONFIG_FILE={value} is not of the form recipes/<path>.yaml",
            f"name a template under {TEMPLATE_ROOT.as_posix()}/ or a recipe of the srt-slurm "
            "checkout, as recipes/<path>", "row-template"),
            refusal.BAD_CONFIG_FILE, value)
    return value


def template_path(value: str, repo: Path) -> Path:
    path, _ = overrides.split(value)
    return repo / TEMPLATE_ROOT / path[len(CONFIG_PREFIX):]


def _shown(path: Path) -> Path:
    try:
        return path.relative_to(Path.cwd())
    except ValueError:
        return path


def single_node_name(row: dict) -> str:
    """``<model-prefix>_<precision>_<gpu>_<framework>[_mtp]``: InferenceX's name for the
    script of a single-node row, and ours for its config's template."""
    mtp = "_mtp" if row.get("spec-decoding") == "mtp" else ""
    gpu = rowexpr.gpu_of(str(row.get("runner")))
    return (f"{row.get('model-prefix')}_{row.get('precision')}_{gpu}"
            f"_{row.get('framework')}{mtp}")


def single_root(row: dict) -> Path:
    """Where a single-node row's templates live: agentic-coding rows (prefix caching, KV
    offload, no fixed context) have their own, as InferenceX keeps its agentic scripts apart."""
    agentic = row.get("scenario-type") == "agentic-coding"
    return SINGLE_ROOT / AGENTIC if agentic else SINGLE_ROOT


def find_single(row: dict, repo: Path, source: str) -> Found:
    """A single-node row's template: its config's own, else its framework's default."""
    name = single_node_name(row)
    root = single_root(row)
    own = repo / root / f"{name}.yaml"
    if own.is_file():
        return Found(TEMPLATE, _shown(own), f"{root.as_posix()}/{name}.yaml", None)
    framework = str(row.get("framework"))
    default = repo / root / DEFAULTS / f"{framework}.yaml"
    if default.is_file():
        return Found(DEFAULT, _shown(default), f"{root.as_posix()}/{DEFAULTS}/"
                     f"{framework}.yaml", None)
    have = sorted(p.stem for p in (repo / root / DEFAULTS).glob("*.yaml"))
    raise refusal.RowRefused(Diagnostic(
        source, 0, 0, f"single-node row ({rowfit.row_label(row)}): no template "
        f"{_shown(own)} and no default template for framework '{framework}'",
        f"add {root.as_posix()}/{name}.yaml (defaults exist for "
        f"{', '.join(have) or 'no framework'})", "row-template"),
        refusal.SINGLE_NODE, framework)


def multi_defaults_dir(row: dict) -> Path:
    """Where a multi-node row's framework defaults live: an agentic-coding row's (prefix
    caching, prefill's DRAM offload, the replay) under ``agentic/defaults/``."""
    agentic = row.get("scenario-type") == "agentic-coding"
    return TEMPLATE_ROOT / AGENTIC / DEFAULTS if agentic else TEMPLATE_ROOT / DEFAULTS


def multi_default(row: dict, repo: Path) -> Found | None:
    """A multi-node row's framework default, if there is one for its framework."""
    framework = str(row.get("framework"))
    folder = multi_defaults_dir(row)
    path = repo / folder / f"{framework}.yaml"
    if not path.is_file():
        return None
    return Found(DEFAULT, _shown(path), f"{folder.as_posix()}/{framework}.yaml", None)


def _defaults_hint(row: dict, repo: Path) -> str:
    folder = multi_defaults_dir(row)
    have = sorted(p.stem for p in (repo / folder).glob("*.yaml"))
    return (f"multi-node defaults exist for {', '.join(have) or 'no framework'} "
            f"(under {folder.as_posix()}/)")


def find(row: dict, repo: Path, srt_slurm: Path | None, source: str, *,
         missing: str = REFUSE) -> Found:
    """The row's recipe file: for a multi-node row our template first, then the srt-slurm
    checkout's recipe (with ``missing=FALLBACK``, the framework default when neither has
    it); a multi-node row naming none its framework's default; for a single-node row
    :func:`find_single`."""
    if not is_multi_node(row):
        return find_single(row, repo, source)
    try:
        value = config_file(row, source)
    except refusal.RowRefused as exc:
        if exc.reason != refusal.NO_CONFIG_FILE:
            raise
        default = multi_default(row, repo)
        if default is None:
            first = exc.diagnostics[0]
            hint = (f"{first.hint}, or add a default for framework '{row.get('framework')}' "
                    f"({_defaults_hint(row, repo)})")
            raise refusal.RowRefused(replace(first, hint=hint), exc.reason,
                                     exc.detail) from None
        return default
    path, selector = overrides.split(value)
    if selector is not None and not overrides.valid_selector(selector):
        raise InputError(Diagnostic(source, 0, 0, f"CONFIG_FILE={value}: '{selector}' is not "
                                    "an override selector",
                                    f"a selector is {overrides.SELECTOR_FORMS}",
                                    "recipe-selector"))
    ours = template_path(value, repo)
    if ours.is_file():
        if selector is not None:
            raise InputError(Diagnostic(
                source, 0, 0, f"CONFIG_FILE={value}: override selectors are not supported "
                f"on a template ({_shown(ours)})",
                "a template is one concrete recipe; name the file without ':selector'",
                "row-template"))
        return Found(TEMPLATE, _shown(ours), value, None)
    theirs = srt_slurm / path if srt_slurm is not None else None
    if theirs is not None and theirs.is_file():
        return Found(SRT_SLURM, theirs, value, selector, srt_slurm)
    if missing == FALLBACK and (default := multi_default(row, repo)) is not None:
        return replace(default, replaces=value)
    where = (f"and no recipe {theirs} in the srt-slurm checkout" if theirs is not None
             else "and no srt-slurm checkout was given to look in (--srt-slurm DIR)")
    raise refusal.RowRefused(Diagnostic(
        source, 0, 0, f"CONFIG_FILE={value}: no template {_shown(ours)}, {where}",
        f"add the template under {TEMPLATE_ROOT.as_posix()}/, point CONFIG_FILE at a recipe "
        "that exists, or use an srt-slurm checkout that has it", "row-template"),
        refusal.NOT_FOUND, path)


def needs_checkout(row: dict, repo: Path) -> bool:
    """Whether the row's recipe can only come from the srt-slurm checkout: a multi-node row
    whose ``CONFIG_FILE`` is no template of ours (a malformed one is not: rendering says
    why, before anything is fetched)."""
    if not is_multi_node(row):
        return False
    try:
        value = config_file(row, "<row>")
    except InputError:
        return False
    return not template_path(value, repo).is_file()


def check_checkout(path: Path, option: str = "--srt-slurm") -> None:
    """``path`` looks like an srt-slurm checkout (it has the recipes/ folder)."""
    if not (path / "recipes").is_dir():
        raise InputError(Diagnostic(str(path), 0, 0, f"{option} {path}: not an srt-slurm "
                                    "checkout (no recipes/ folder)",
                                    "pass the root of an srt-slurm clone", "srt-slurm-dir"))


@cache
def commit_of(checkout: Path) -> str | None:
    """The checkout's HEAD commit (None when it is not a git checkout)."""
    if not (checkout / ".git").exists():
        return None
    try:
        p = gitexec.run(["rev-parse", "HEAD"], cwd=str(checkout), timeout=30)
    except (InputError, OSError, subprocess.TimeoutExpired):
        return None
    return p.stdout.strip() if p.returncode == 0 else None
