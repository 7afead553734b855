"""The ``additional-settings`` of a multi-node row that the renderer understands.

InferenceX's launchers export a row's settings as shell variables, and some of them change
what runs (a second image for prefill, synthetic MTP acceptance). A setting the renderer
does not act on would be dropped without a word, so a row that carries one is refused,
naming it. The understood ones name the recipe or restate its topology, which is checked.

A setting is a number only when it is written as one in plain ASCII
(:mod:`infersweep.config.numbers`): ``1_000``, ``inf``, ``1e308``, Arabic-Indic digits or
400 digits are text, so arithmetic on them is a located error, never an overflow;
``infersweep validate`` refuses them where a number is meant
(:mod:`infersweep.config.settingvalues`).
"""

from __future__ import annotations

from infersweep.config.numbers import MAX_DIGITS, PLAIN_WHOLE
from infersweep.diagnostics import Diagnostic
from infersweep.recipe import refusal, rowfit

CONFIG_FILE = "CONFIG_FILE"
NODES = {"prefill": "PREFILL_NODES", "decode": "DECODE_NODES"}
WORKERS = {"prefill": "PREFILL_WORKERS", "decode": "DECODE_WORKERS"}
GPUS_PER_NODE = "GPUS_PER_NODE"
# checked against an srt-slurm recipe (srtfit) / a template (rowfit)
KNOWN = frozenset({CONFIG_FILE, GPUS_PER_NODE, *NODES.values(), *WORKERS.values()})
KNOWN_TO_TEMPLATES = frozenset({CONFIG_FILE, *NODES.values()})
ROLES = ("prefill", "decode")


def of_row(row: dict) -> dict[str, tuple[str, str]]:
    """Every setting of the row's prefill and decode blocks: name -> (role, value)."""
    out: dict[str, tuple[str, str]] = {}
    for role in ROLES:
        for name, value in rowfit.settings(row.get(role) or {}).items():
            out.setdefault(name, (role, value))
    return out


def check_known(row: dict, source: str, known: frozenset[str] = KNOWN) -> None:
    """Refuse a row that carries a setting the renderer does not act on."""
    unknown = [(name, role) for name, (role, _) in of_row(row).items() if name not in known]
    if not unknown:
        return
    label = rowfit.row_label(row)
    raise refusal.RowRefused(
        [Diagnostic(source, 0, 0, f"row ({label}): {role} additional-settings has {name}, "
                    "which the recipe renderer does not know", "InferenceX's launcher acts on "
                    f"it; a recipe rendered without it would run something else (understood: "
                    f"{', '.join(sorted(known))})", "row-unknown-setting")
         for name, role in unknown],
        refusal.UNKNOWN_SETTING, ", ".join(sorted(name for name, _ in unknown)))


def number(row: dict, name: str, source: str) -> tuple[int | None, list[Diagnostic]]:
    """A whole-number setting (None when the row does not set it)."""
    found = of_row(row).get(name)
    if found is None:
        return None, []
    role, value = found
    if PLAIN_WHOLE.fullmatch(value):
        return int(value), []
    return None, [Diagnostic(source, 0, 0, f"row ({rowfit.row_label(row)}): {role} "
                             f"{name}={value[:40]!r} is not a whole number",
                             f"write digits 0-9 only, at most {MAX_DIGITS}", "row-settings")]
