"""Click parameter types with range checks, so that every number a command takes is checked
when the command line is parsed, not when the value is first used (a negative worker count
that hangs, a port that wraps modulo 65536, a ``nan`` timeout that never expires).

Use these instead of bare ``type=int`` / ``type=float`` for any option that has a valid range.
"""

from __future__ import annotations

import math

import click


class FiniteFloat(click.FloatRange):
    """A float in a range that is never ``nan`` or ``±inf`` (``allow_inf`` lets ``inf`` through
    for options where it means "unbounded", such as a request rate)."""

    name = "finite float"

    def __init__(self, min=None, max=None, min_open=False, max_open=False, allow_inf=False):
        super().__init__(min=min, max=max, min_open=min_open, max_open=max_open)
        self.allow_inf = allow_inf

    def convert(self, value, param, ctx):
        rv = click.types.FloatParamType.convert(self, value, param, ctx)
        if math.isnan(rv):
            self.fail(f"{value!r} is not a number", param, ctx)
        if math.isinf(rv):
            if not (self.allow_inf and rv > 0):
                self.fail(f"{value!r} is not a finite number", param, ctx)
            return rv
        return super().convert(rv, param, ctx)


def positive_float(allow_inf: bool = False) -> FiniteFloat:
    """Strictly greater than zero."""
    return FiniteFloat(min=0, min_open=True, allow_inf=allow_inf)


def non_negative_float() -> FiniteFloat:
    return FiniteFloat(min=0)


def fraction() -> FiniteFloat:
    """A value in [0, 1]."""
    return FiniteFloat(min=0, max=1)


POSITIVE_INT = click.IntRange(min=1)
NON_NEGATIVE_INT = click.IntRange(min=0)
# 0 asks the operating system for a free port; 65535 is the highest TCP port.
PORT = click.IntRange(min=0, max=65535)
