"""Session affinity: the session key a request carries, and a consistent-hash ring over
targets (DP ranks or workers), so every turn of one session lands on the same target.

The ring hashes with blake2b (not Python's ``hash``), so a key maps to the same target in
every process and run.
"""

from __future__ import annotations

import bisect
import hashlib

# The headers routers key sessions on, most specific first: SGLang's model gateway routing
# key, vllm-router's session id, Dynamo's session id, then the correlation id every aiperf
# conversation carries (X-Correlation-ID, the default of its --session-header).
SESSION_HEADERS = ("x-smg-routing-key", "x-session-id", "x-dynamo-session-id",
                   "x-correlation-id")


def session_key(headers: dict[str, str]) -> str | None:
    """The first session header present (header names lower-cased), or None."""
    for name in SESSION_HEADERS:
        v = headers.get(name)
        if v:
            return v
    return None


def _point(data: str) -> int:
    return int.from_bytes(hashlib.blake2b(data.encode(), digest_size=8).digest(), "big")


class HashRing:
    """Consistent hashing with virtual nodes: ``n`` targets, each at ``vnodes`` points."""

    def __init__(self, n: int, vnodes: int = 64):
        if n < 1:
            raise ValueError("a hash ring needs at least one target")
        points = sorted((_point(f"target-{t}#{v}"), t) for t in range(n) for v in range(vnodes))
        self._keys = [p for p, _ in points]
        self._targets = [t for _, t in points]

    def target(self, key: str) -> int:
        """The index of the target owning ``key``: the first point clockwise of its hash."""
        i = bisect.bisect(self._keys, _point(key))
        return self._targets[i % len(self._targets)]
