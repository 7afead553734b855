"""What counts as a number in a setting's value: plain ASCII decimals within bounds.

One definition for the catalog check (``validate``) and the recipe renderer
(``row.setting.NAME`` in template arithmetic, the whole-number settings of a topology):
digits ``0-9``, at most one ``.``, at most :data:`MAX_DIGITS` digits on either side.
``1_000``, ``inf``, ``1e308``, a sign, Arabic-Indic or full-width digits and 400-digit
integers are text.
"""

from __future__ import annotations

import re

MAX_DIGITS = 15  # 10**15: more than any count a setting holds, and exact as a float
LIMIT = 10 ** MAX_DIGITS
PLAIN_WHOLE = re.compile(rf"[0-9]{{1,{MAX_DIGITS}}}")
PLAIN_DECIMAL = re.compile(rf"[0-9]{{1,{MAX_DIGITS}}}\.[0-9]{{1,{MAX_DIGITS}}}")
# settings InferenceX's launchers read as counts: whole numbers only
WHOLE_SETTINGS = frozenset({"GPUS_PER_NODE", "PREFILL_NODES", "DECODE_NODES",
                            "PREFILL_WORKERS", "DECODE_WORKERS", "DECODE_MTP_SIZE"})


def plain_number(text: str) -> int | float | None:
    """``text`` as a number when it is a plain ASCII decimal within :data:`MAX_DIGITS`
    (``12`` -> 12, ``1.79`` -> 1.79), else None."""
    if PLAIN_WHOLE.fullmatch(text):
        return int(text)
    if PLAIN_DECIMAL.fullmatch(text):
        return float(text)
    return None
