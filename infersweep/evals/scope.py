"""What an eval is judged for: staging (the default, strict) or a scaled-down local run."""

from __future__ import annotations

from enum import StrEnum


class Scope(StrEnum):
    FULL = "full"    # staging: at least the thresholds file's minimum number of questions
    LOCAL = "local"  # a scaled-down local run (--limit): the questions it planned, however few
