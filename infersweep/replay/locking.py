"""One lock file per shared cache folder: two replays (or test sessions) that share a cache
never build the same tool cache or unpack the same action tree at once."""

from __future__ import annotations

import contextlib
import fcntl
from pathlib import Path


@contextlib.contextmanager
def locked(path: Path):
    """Hold an exclusive ``flock`` on ``path`` (created if missing) for the block."""
    with open(path, "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
