"""The refusals one eval check collects: located diagnostics, each under a named rule.

A rule that fires on many lines (every sample of a forged folder, say) lists its first
:data:`SHOWN` places and then says how many more there are, so the cause stays readable.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from infersweep.diagnostics import Diagnostic

SHOWN = 10


@dataclass
class Findings:
    items: list[Diagnostic] = field(default_factory=list)
    _counts: dict[str, int] = field(default_factory=dict)
    _last: dict[str, Diagnostic] = field(default_factory=dict)

    def refuse(self, path: str, line: int, rule: str, message: str, hint: str = "") -> None:
        n = self._counts[rule] = self._counts.get(rule, 0) + 1
        d = Diagnostic(str(path), line, 1 if line else 0, message, hint, rule)
        self._last[rule] = d
        if n <= SHOWN:
            self.items.append(d)

    def done(self) -> list[Diagnostic]:
        """Every diagnostic, with one 'and N more' line per rule that fired more often."""
        out = list(self.items)
        for rule, n in self._counts.items():
            if n > SHOWN:
                last = self._last[rule]
                out.append(Diagnostic(last.path, 0, 0, f"{n - SHOWN} more like the above",
                                      last.hint, rule=last.rule))
        return out
