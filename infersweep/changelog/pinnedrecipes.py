"""The pinned srt-slurm checkout, for the setup job's rows whose recipe lives there.

A multi-node row may name its recipe as InferenceX does, a ``CONFIG_FILE`` inside the
srt-slurm checkout. The launcher renders such a row from the commit pinned in
``configs/runtimes.yaml``; the setup job, deciding which rows can launch, needs the same
files. It fetches exactly that commit (shallow, as the launcher's cache does) only when a row
needs it, so a sweep of our own templates fetches nothing, and a pin the remote lacks fails
the setup job in seconds instead of every benchmark job later.
"""

from __future__ import annotations

from pathlib import Path

from infersweep.pins.lock import load_lock
from infersweep.pins.verify import resolve_url
from infersweep.recipe.lookup import needs_checkout
from infersweep.rowjobs.checkout import fetch

LOCK = Path("configs", "runtimes.yaml")


def needed(outputs: dict[str, list[dict]], repo: Path) -> bool:
    return any(needs_checkout(row, repo) for rows in outputs.values() for row in rows)


def fetch_pinned(repo: Path, dest: Path, environ: dict[str, str], say=print) -> Path:
    """The pinned srt-slurm commit checked out at ``dest`` (its ``recipes/`` is what the
    renderer reads)."""
    pin = load_lock(repo / LOCK).srt_slurm
    url = resolve_url(pin, environ=environ)
    fetch(dest, url, pin.commit)
    say(f"srt-slurm {pin.commit[:12]} fetched for the rows whose recipe it holds")
    return dest
