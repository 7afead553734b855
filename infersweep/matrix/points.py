"""Which concurrencies and sequence families the named configs have: a ``--conc`` or
``--seq-lens`` value that none of them has is a typo, to be refused with the valid values, not
an empty matrix (``matrix test-config``, a manual dispatch)."""

from __future__ import annotations

import dataclasses
import re

from infersweep.config.catalog import Catalog
from infersweep.matrix.generate import Selection, generate_keyed
from infersweep.matrix.rows import SEQ_FAMILIES, concs, seq_name

_PAIR = re.compile(r"[1-9][0-9]*_[1-9][0-9]*")
SEQ_FORM = f"use {', '.join(SEQ_FAMILIES)}, or ISL_OSL in tokens, e.g. 2048_1024"


def is_seq_family(value: str) -> bool:
    """A family name (1k1k, 8k1k) or ISL_OSL with positive token counts."""
    return value in SEQ_FAMILIES or _PAIR.fullmatch(str(value)) is not None


def unmatched(catalog: Catalog, sel: Selection) -> list[tuple[str, list[str], list[str]]]:
    """``(option, values none of the selected configs has, the values they have)`` for
    ``--conc`` and ``--seq-lens``; empty when every value matches something."""
    if not sel.conc and not sel.seq_lens:
        return []
    rows = [row for _, row in generate_keyed(catalog, dataclasses.replace(
        sel, conc=None, seq_lens=None))]
    have = {"--conc": sorted({c for row in rows for c in concs(row)}),
            "--seq-lens": sorted({seq_name(row["isl"], row["osl"]) for row in rows
                                  if row.get("isl")})}
    out = []
    for option, wanted in (("--conc", sel.conc), ("--seq-lens", sel.seq_lens)):
        bad = [str(v) for v in wanted or [] if v not in have[option]]
        if bad:
            out.append((option, bad, [str(v) for v in have[option]]))
    return out


def describe(option: str, bad: list[str], have: list[str], keys) -> str:
    what = "a point" if option == "--conc" else "a sequence family"
    return (f"{', '.join(bad)}: not {what} of {', '.join(keys)} (it has: "
            f"{', '.join(have) or 'none'}; see `infersweep explain KEY`)")
