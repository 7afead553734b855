"""`recipe coverage` for people (a table) and for programs (JSON)."""

from __future__ import annotations

from pathlib import Path

from tabulate import tabulate

from infersweep.recipe.coverage import NOT_RUN, REJECTED, STANDS_IN, Coverage
from infersweep.recipe.rendered import DEFAULT, SRT_SLURM, TEMPLATE

SOURCE_WORDS = {TEMPLATE: "with the config's own template",
                DEFAULT: "with the framework default",
                SRT_SLURM: "from the srt-slurm checkout",
                STANDS_IN: "with the framework default, the named recipe missing"}
EXAMPLES = 5  # details listed per reason in the table (JSON lists all)


def _checkout(path: Path | None, commit: str | None) -> dict | None:
    return None if path is None else {"path": str(path), "commit": commit}


def as_json(cov: Coverage, *, catalogs: list[Path], runner_config: Path,
            srt_slurm: Path | None, srt_slurm_commit: str | None) -> dict:
    s = cov.srtctl
    return {
        "catalogs": [str(p) for p in catalogs], "runner-config": str(runner_config),
        "srt-slurm": _checkout(srt_slurm, srt_slurm_commit),
        "srtctl": None if s is None else {"path": str(s.exe), "checkout": str(s.checkout),
                                          "commit": s.commit, "backends": sorted(s.backends)},
        "summary": cov.summary(),
        "other-scenarios": dict(sorted(cov.skipped.items())),
        "refusals": cov.refusals(),
        "rejections": cov.verdicts(REJECTED),
        "seconds": cov.seconds,
        "rows": [o.as_json() for o in cov.outcomes],
    }


def _short(commit: str | None) -> str:
    return f" at {commit[:12]}" if commit else ""


def table(cov: Coverage, *, catalogs: list[Path], srt_slurm: Path | None,
          srt_slurm_commit: str | None, scenario: str = "fixed-seq-len") -> str:
    s = cov.summary()
    lines = [f"recipe coverage of {', '.join(str(p) for p in catalogs)}"]
    lines.append("srt-slurm checkout: " + (f"{srt_slurm}{_short(srt_slurm_commit)}"
                                           if srt_slurm else "none (--srt-slurm DIR)"))
    if cov.srtctl is not None:
        lines.append(f"srtctl dry run: {cov.srtctl.exe}{_short(cov.srtctl.commit)}")
    other = ", ".join(f"{n} {k}" for k, n in sorted(cov.skipped.items()))
    counts = [[f"{scenario} rows", s["rows"]], ["rendered", s["rendered"]]]
    counts += [[f"  {SOURCE_WORDS.get(k, f'from {k}')}", n]
               for k, n in s["rendered-by-source"].items()]
    if cov.srtctl is not None:
        counts += [["  accepted by srtctl's dry run", s["accepted"]],
                   ["  rejected by srtctl's dry run", s["rejected"]],
                   ["  not dry-run (no backend for them)", s["not-dry-run"]]]
    counts.append(["refused", s["rows"] - s["rendered"]])
    counts += [[f"  {reason}", n] for reason, n in s["refused"].items()]
    width = max(len(label) for label, _ in counts)
    lines.append("")
    lines += [f"{label.ljust(width)}  {n:>6}" for label, n in counts]
    if other:
        lines.append(f"(not counted: rows of other scenarios: {other})")
    refusals = cov.refusals()
    if refusals:
        rows = []
        for reason, details in refusals.items():
            listed = [f"{d} ({n})" if n > 1 else d for d, n in list(details.items())[:EXAMPLES]]
            if len(details) > EXAMPLES:
                listed.append(f"... {len(details) - EXAMPLES} more (--format json)")
            rows.append([reason, sum(details.values()), "\n".join(listed)])
        lines += ["", tabulate(rows, headers=["refused because", "rows", "which"],
                               tablefmt="simple", maxcolwidths=[None, None, 90])]
    for status, title in ((REJECTED, "rejected by srtctl"), (NOT_RUN, "not dry-run")):
        found = cov.verdicts(status)
        if found:
            lines += ["", tabulate([[m, n] for m, n in found.items()],
                                   headers=[title, "rows"], tablefmt="simple",
                                   maxcolwidths=[100, None])]
    timing = ", ".join(f"{k} {v:.1f} s" for k, v in cov.seconds.items())
    lines += ["", f"time: {timing}"]
    return "\n".join(lines) + "\n"
