"""Two aggregates point by point: the change in throughput per GPU, interactivity and TTFT.

Points match on config key, topology, ISL/OSL, scale-down and concurrency. A change is a
regression when it is worse than the metric's threshold (percent), in the metric's bad
direction: lower for throughput and interactivity, higher for TTFT.
"""

from __future__ import annotations

from dataclasses import dataclass

# metric -> (heading, higher is better, default threshold in percent)
METRICS: dict[str, tuple[str, bool, float]] = {
    "tput_per_gpu": ("tput/GPU (tok/s)", True, 5.0),
    "output_tput_per_gpu": ("output tput/GPU (tok/s)", True, 5.0),
    "median_intvty": ("interactivity p50 (tok/s/user)", True, 5.0),
    "p99_intvty": ("interactivity p99 (tok/s/user)", True, 10.0),
    "median_ttft": ("TTFT p50 (s)", False, 10.0),
    "p99_ttft": ("TTFT p99 (s)", False, 20.0),
}
DEFAULT_METRICS = ("tput_per_gpu", "median_intvty", "median_ttft")


def match_key(r: dict) -> tuple:
    return (r["config_key"], r["topology"], r["isl"], r["osl"], r["scale_down"], r["conc"])


@dataclass(frozen=True)
class Change:
    key: tuple
    metric: str
    base: float | None
    new: float | None

    @property
    def percent(self) -> float | None:
        if self.base in (None, 0) or self.new is None:
            return None
        return (self.new - self.base) / self.base * 100.0

    def regression(self, threshold: float) -> bool:
        pct = self.percent
        if pct is None:
            return False
        higher_better = METRICS[self.metric][1]
        return -pct > threshold if higher_better else pct > threshold


def compare(base: dict, new: dict, metrics=DEFAULT_METRICS):
    """(changes per matched point, points only in base, points only in new)."""
    b = {match_key(r): r for r in base["rows"]}
    n = {match_key(r): r for r in new["rows"]}
    both = sorted(set(b) & set(n), key=lambda k: tuple(str(x) for x in k))
    changes = {k: [Change(k, m, b[k].get(m), n[k].get(m)) for m in metrics] for k in both}
    only_base = sorted(set(b) - set(n), key=lambda k: tuple(str(x) for x in k))
    only_new = sorted(set(n) - set(b), key=lambda k: tuple(str(x) for x in k))
    return changes, only_base, only_new


def _fmt(v: float | None) -> str:
    if v is None:
        return "n/a"
    return f"{v:,.4g}" if abs(v) < 1 else f"{v:,.1f}"


def markdown(changes, only_base, only_new, thresholds: dict[str, float],
             metrics=DEFAULT_METRICS) -> tuple[str, int]:
    """The table (one line per point, base → new and % per metric) and the regression count."""
    head = ["config", "topology", "ISL/OSL", "conc"] + [METRICS[m][0] for m in metrics]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    regressions = 0
    for key, cs in changes.items():
        cells = [key[0], key[1], f"{key[2]}/{key[3]}", str(key[5])]
        for c in cs:
            pct = c.percent
            mark = ""
            if c.regression(thresholds[c.metric]):
                regressions += 1
                mark = " **regression**"
            change = "n/a" if pct is None else f"{pct:+.1f}%"
            cells.append(f"{_fmt(c.base)} → {_fmt(c.new)} ({change}){mark}")
        lines.append("| " + " | ".join(cells) + " |")
    text = "\n".join(lines) + "\n"
    limits = ", ".join(f"{METRICS[m][0]} {thresholds[m]:g}%" for m in metrics)
    text += f"\nRegression thresholds: {limits}. {regressions} regression(s).\n"
    for what, keys in (("only in BASE", only_base), ("only in NEW", only_new)):
        if keys:
            text += f"\nPoints {what}: " + ", ".join(
                f"{k[0]} {k[1]} {k[2]}/{k[3]} c={k[5]}" for k in keys) + "\n"
    return text, regressions
