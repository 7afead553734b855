"""Click options that take several values after one flag (``--config-keys a b c``).

InferenceX's scripts pass lists argparse-style (``nargs='+'``); click options take one value
each. :class:`MultiOption` accepts both ``--opt a b`` and ``--opt a --opt b``.
"""

from __future__ import annotations

import click


class MultiOption(click.Option):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("multiple", True)
        super().__init__(*args, **kwargs)

    def add_to_parser(self, parser, ctx):
        super().add_to_parser(parser, ctx)
        for name in self.opts:
            opt = parser._long_opt.get(name) or parser._short_opt.get(name)
            if opt is None:
                continue
            original = opt.process

            def process(value, state, _original=original, _parser=parser):
                values = [value]
                prefixes = _parser._opt_prefixes
                while state.rargs and not any(
                        state.rargs[0].startswith(p) for p in prefixes):
                    values.append(state.rargs.pop(0))
                for v in values:
                    _original(v, state)

            opt.process = process


def multi_option(*decls, **kwargs):
    return click.option(*decls, cls=MultiOption, **kwargs)
