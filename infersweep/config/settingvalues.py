"""The values of a worker's ``additional-settings``: numbers in plain ASCII decimals.

A setting's value is text the launcher exports, but templates compute with it
(``{{ row.setting.PREFILL_NODES * 2 }}``) and the renderer compares it with the topology.
Python would read ``1_000``, ``inf``, ``1e308`` and Arabic-Indic digits as numbers, and a
400-digit integer overflows a division: such a value is refused here, at its line, rather
than by a traceback when a row is rendered. The settings InferenceX's launchers read as counts
(:data:`~infersweep.config.numbers.WHOLE_SETTINGS`) take whole numbers only.
"""

from __future__ import annotations

import unicodedata

from infersweep.config.numbers import MAX_DIGITS, PLAIN_WHOLE, WHOLE_SETTINGS, plain_number
from infersweep.config.rules import search_spaces
from infersweep.diagnostics import Diagnostic
from infersweep.yamldoc import YamlDoc

RULE = "setting-value"
ROLES = ("prefill", "decode")


def _reads_as_number(text: str) -> bool:
    """Whether Python (or a shell's arithmetic, for digits of any script) would take
    ``text`` for a number."""
    for kind in (int, float):
        try:
            kind(text)
            return True
        except (ValueError, OverflowError):
            pass
    return any(unicodedata.category(c) == "Nd" for c in text) and \
        not any(c.isalpha() for c in text)


def problem(name: str, value: str) -> tuple[str, str] | None:
    """(message, hint) when ``value`` is not a fit value for the setting ``name``."""
    shown = value if len(value) <= 40 else value[:37] + "..."
    example = f"e.g. {name}=2"
    if name in WHOLE_SETTINGS:
        if PLAIN_WHOLE.fullmatch(value):
            return None
        if value.isascii() and value.isdigit():
            return (f"setting {name}={shown} has more than {MAX_DIGITS} digits",
                    f"{name} counts things: write a whole number below 10^{MAX_DIGITS}")
        return (f"setting {name}={shown!r} is not a whole number",
                f"{name} counts things: write ASCII digits 0-9 only, {example}")
    if plain_number(value) is not None:
        return None
    if value.isascii() and value.replace(".", "", 1).isdigit():
        return (f"setting {name}={shown} has more than {MAX_DIGITS} digits",
                f"write at most {MAX_DIGITS} digits before and after the point")
    if _reads_as_number(value):
        return (f"setting {name}={shown!r} is not a plain decimal number",
                "write ASCII digits 0-9 with at most one '.' (no '_', exponent, sign, "
                f"inf or nan), {example}")
    return None


def check_settings(doc: YamlDoc, key: str, entry: dict) -> list[Diagnostic]:
    """Every unfit setting value of the entry's workers, located at its list item."""
    out = []
    for scenario, i, j, ss in search_spaces(entry):
        for role in ROLES:
            block = ss.get(role)
            if not isinstance(block, dict):
                continue
            for n, item in enumerate(block.get("additional-settings") or []):
                name, sep, value = str(item).partition("=")
                found = problem(name, value) if sep else None
                if found is not None:
                    pointer = (key, "scenarios", scenario, i, "search-space", j, role,
                               "additional-settings", n)
                    out.append(doc.diag(pointer, *found, rule=RULE))
    return out
