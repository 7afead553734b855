"""``--scale-down F``: the same recipe with a smaller workload, for a sweep on one machine.

Only the benchmark section changes: ISL, OSL, prompt and warm-up counts are divided by F, and
the command is generated again by the recipe's own generator. Concurrencies stay: they are
what a point is. Each point keeps at least one full wave at its concurrency (prompts >= conc)
and one warm-up, so every point still runs at the concurrency it names.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, replace

from infersweep.recipe import workload
from infersweep.recipe.render import Rendered, set_benchmark

MIN_OSL = 2  # TPOT needs a second output token


@dataclass(frozen=True)
class ScaledWorkload(workload.Workload):
    scale_down: float = 1.0

    def points(self, name: str) -> list[workload.Point]:
        f = self.scale_down
        return [workload.Point(c, max(c, math.ceil(c * self.prompts_per_conc / f)),
                               max(1, math.ceil(c * self.warmups_per_conc / f)),
                               f"{name}-c{c}.json") for c in self.concs]


def scale(rendered: Rendered, factor: float, *, client: str, result_dir: str) -> Rendered:
    """``rendered`` with its workload divided by ``factor`` (itself when factor is 1)."""
    if factor == 1:
        return rendered
    w = rendered.workload
    if getattr(w, "agentic", False):  # the window and warm-up shrink inside the replay
        return _with_workload(rendered, w.scaled(factor), client=client, result_dir=result_dir)
    scaled = ScaledWorkload(model=w.model, isl=max(1, round(w.isl / factor)),
                            osl=max(MIN_OSL, round(w.osl / factor)), range_ratio=w.range_ratio,
                            concs=w.concs, prompts_per_conc=w.prompts_per_conc,
                            warmups_per_conc=w.warmups_per_conc, eval_conc=w.eval_conc,
                            eval_only=w.eval_only, scale_down=factor)
    return _with_workload(rendered, scaled, client=client, result_dir=result_dir)


def _with_workload(rendered: Rendered, work, *, client: str, result_dir: str) -> Rendered:
    recipe = copy.deepcopy(rendered.recipe)
    set_benchmark(recipe, work, client=client, result_dir=result_dir)
    return replace(rendered, recipe=recipe, workload=work, points=work.points(rendered.name))
