"""The end-of-run table: every expected point of every manifest, present or not."""

from __future__ import annotations

from tabulate import tabulate

from infersweep.rowjobs import manifest as manifests

HEADERS = ["config key", "recipe", "conc", "ISL/OSL", "tput/GPU (tok/s)",
           "interactivity (tok/s/user)", "TTFT p50 (ms)", "TTFT p99 (ms)",
           "completed/requested", "status"]


def _num(value, digits: int = 1) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def point_row(m: dict, p: dict) -> list[str]:
    """One table row. Throughput per GPU divides by every GPU of the job (prefill and decode,
    InferenceX's ``tput_per_gpu``); interactivity is 1000 / median TPOT."""
    metrics = p.get("metrics") or {}
    tput = metrics.get("total_token_throughput")
    per_gpu = tput / m["gpus"]["total"] if tput is not None else None
    tpot = metrics.get("median_tpot_ms")
    intvty = 1000.0 / tpot if tpot else None
    done = "-" if p.get("completed") is None else str(p["completed"])
    status = p["status"] if p["status"] == manifests.PRESENT else f"{p['status']}: {p['reason']}"
    # an agentic point has no fixed lengths and no prompt count: it replays for a window
    lengths = "agentic" if p["isl"] is None else f"{p['isl']}/{p['osl']}"
    asked = f"{done} requests" if p["requested"] is None else f"{done}/{p['requested']}"
    return [m["provenance"]["config-key"], m["name"], str(p["conc"]), lengths,
            _num(per_gpu), _num(intvty), _num(metrics.get("median_ttft_ms")),
            _num(metrics.get("p99_ttft_ms")), asked, status]


def rows(found: list[dict]) -> list[list[str]]:
    return [point_row(m, p) for m in found for p in m["points"]]


def counts(found: list[dict]) -> tuple[int, int]:
    """(points present, points expected)."""
    points = [p for m in found for p in m["points"]]
    return sum(p["status"] == manifests.PRESENT for p in points), len(points)


def text_table(found: list[dict]) -> str:
    present, expected = counts(found)
    body = tabulate(rows(found), headers=HEADERS, tablefmt="simple", disable_numparse=True,
                    colalign=("left", "left") + ("right",) * 7 + ("left",))
    return f"{body}\n{present} of {expected} point(s) present"


def markdown(found: list[dict], *, title: str = "Sweep results") -> str:
    """The GitHub step summary: the same table, and every problem."""
    present, expected = counts(found)
    parts = [f"### {title}", "", f"{present} of {expected} point(s) present.", "",
             tabulate(rows(found), headers=HEADERS, tablefmt="github", disable_numparse=True)]
    problems = [line for m in found for line in manifests.problems(m)]
    if problems:
        parts += ["", "**Problems**", ""] + [f"- {line}" for line in problems]
    return "\n".join(parts) + "\n"


def report(found: list[dict], out, *, title: str) -> list[str]:
    """Print the table of every point, write it as ``out/summary.md`` and the step summary,
    print each problem as an ``error:`` line; the problems, for the exit code."""
    import click

    from infersweep import ghactions
    from infersweep.atomic import write_atomic

    click.echo(text_table(found))
    summary = markdown(found, title=title)
    write_atomic(out / "summary.md", summary)
    ghactions.add_summary(summary)
    issues = [line for m in found for line in manifests.problems(m)]
    for line in issues:
        click.echo(f"error: {line}", err=True)
    return issues
