"""The KV pool of one DP rank: pages, a prefix cache over them, and an optional CPU tier.

A prompt is cut into pages of ``page_size`` tokens. Each full page is named by a hash
chained over every page before it, so a page matches only at the same position after the
same prefix (as vLLM's block hashes and SGLang's radix tree do). A sequence holds the pages
its tokens fill; pages of finished sequences stay cached, unreferenced, until the pool needs
room and evicts them least recently used first. With a CPU tier, evicted pages are written
there (its own LRU); a prompt that misses the GPU pool but finds the following pages on the
CPU loads them back instead of computing them.

Only prompt pages enter the cache: generated tokens hold pages while their sequence runs but
are dropped when it ends (the simulator's output is filler that no client sends back).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass
class KVConfig:
    prefix_caching: bool = False
    page_size: int = 16
    pool_tokens: int = 0          # GPU pool per DP rank; 0 = unlimited
    cpu_tokens: int = 0           # CPU tier per DP rank; 0 = none
    kv_bytes_per_token: int = 70_000
    offload_gbps: float = 25.0    # CPU -> GPU load bandwidth, GB/s

    @property
    def enabled(self) -> bool:
        return self.prefix_caching or self.pool_tokens > 0


def page_hashes(tokens: Sequence, page_size: int) -> list[int]:
    """Chained hashes of the full pages of ``tokens`` (words or token ids)."""
    out = []
    h = 0
    for i in range(0, len(tokens) - page_size + 1, page_size):
        h = hash((h, tuple(tokens[i:i + page_size])))
        out.append(h)
    return out


def _pages(tokens: int, page_size: int) -> int:
    return -(-tokens // page_size)


class Hold:
    """The pages one sequence holds: shared ones (in the prefix cache, referenced) and
    private ones (its unfinished last prompt page, generated tokens, and prompt pages not
    yet computed)."""

    __slots__ = ("hashes", "shared", "private", "committed")

    def __init__(self, hashes: list[int]):
        self.hashes = hashes
        self.shared: list[int] = []
        self.private = 0
        self.committed = False

    @property
    def pages(self) -> int:
        return len(self.shared) + self.private


class KVPool:
    def __init__(self, cfg: KVConfig):
        self.cfg = cfg
        self.page = cfg.page_size
        self.capacity = cfg.pool_tokens // cfg.page_size if cfg.pool_tokens else None
        self.caching = cfg.prefix_caching
        self.refs: dict[int, int] = {}                      # cached pages on GPU -> holders
        self.lru: OrderedDict[int, None] = OrderedDict()    # cached pages nobody holds
        self.private = 0
        self.cpu_capacity = cfg.cpu_tokens // cfg.page_size if cfg.cpu_tokens else 0
        self.cpu: OrderedDict[int, None] | None = OrderedDict() if self.cpu_capacity else None
        # counters, in tokens unless named pages
        self.queries = 0
        self.hits = 0
        self.external_queries = 0
        self.external_hits = 0
        self.computed = 0
        self.pages_offloaded = 0
        self.pages_loaded = 0

    # --- occupancy --------------------------------------------------------------------
    @property
    def used_pages(self) -> int:
        """Pages held by sequences (cached pages nobody holds count as free, as in vLLM)."""
        return len(self.refs) - len(self.lru) + self.private

    @property
    def usage(self) -> float:
        if not self.capacity:
            return 0.0
        return min(1.0, self.used_pages / self.capacity)

    @property
    def cpu_used_pages(self) -> int:
        return len(self.cpu) if self.cpu is not None else 0

    def _free(self) -> int:
        return self.capacity - len(self.refs) - self.private

    # --- lookups ----------------------------------------------------------------------
    def match(self, hashes: list[int], n_tokens: int) -> tuple[int, int]:
        """Leading pages found on the GPU, then the pages after them found on the CPU tier.
        At least the prompt's last token is always computed (as vLLM does), so a prompt
        never matches whole."""
        if not self.caching:
            return 0, 0
        limit = min(len(hashes), (n_tokens - 1) // self.page)
        g = 0
        while g < limit and hashes[g] in self.refs:
            g += 1
        c = 0
        if self.cpu is not None:
            while g + c < limit and hashes[g + c] in self.cpu and hashes[g + c] not in self.refs:
                c += 1
        return g, c

    def admit(self, hold: Hold, n_tokens: int, *, count: bool, force: bool = False,
              extra_tokens: int = 0) -> tuple[int, int] | None:
        """Give ``hold`` pages for ``n_tokens`` (+ ``extra_tokens`` not looked up).

        Returns (tokens found on GPU, tokens loaded from the CPU tier), or None when the
        pool cannot make room now (``force`` takes what it can and overcommits). ``count``
        records the lookup in the hit counters (a preempted request's recompute is not a
        new query, as in vLLM)."""
        g, c = self.match(hold.hashes, n_tokens)
        total = _pages(n_tokens + extra_tokens, self.page)
        new = total - g
        if self.capacity is not None and not force:
            pinned = sum(1 for h in hold.hashes[:g] if h in self.lru)
            if self._free() + len(self.lru) - pinned < new:
                return None
        for h in hold.hashes[:g]:
            self._ref(h)
        self._make_room(new)  # may push older pages out of the CPU tier, never loaded ones:
        for h in hold.hashes[g:g + c]:  # they are on the GPU from now on
            self.refs[h] = 1
            if h in self.cpu:
                self.cpu.move_to_end(h)
        self.pages_loaded += c
        hold.shared = list(hold.hashes[:g + c])
        hold.private = total - g - c
        self.private += hold.private
        hold.committed = False
        if count:
            gt, ct = g * self.page, c * self.page
            self.queries += n_tokens
            self.hits += gt
            if self.cpu is not None:
                self.external_queries += n_tokens
                self.external_hits += ct
            self.computed += n_tokens - gt - ct
        return g * self.page, c * self.page

    def commit(self, hold: Hold) -> None:
        """The prompt is computed: its full pages enter the prefix cache."""
        if hold.committed:
            return
        hold.committed = True
        if not self.caching:
            return
        for h in hold.hashes[len(hold.shared):]:
            if h in self.refs:   # another sequence cached it meanwhile: share theirs
                self._ref(h)
            else:
                self.refs[h] = 1
            hold.shared.append(h)
            hold.private -= 1
            self.private -= 1

    def grow(self, hold: Hold, n_tokens: int, force: bool = False) -> bool:
        """Extend ``hold`` to cover ``n_tokens``; False when no page can be freed."""
        need = _pages(n_tokens, self.page) - hold.pages
        if need <= 0:
            return True
        if self.capacity is not None and not force and self._free() + len(self.lru) < need:
            return False
        self._make_room(need)
        hold.private += need
        self.private += need
        return True

    def release(self, hold: Hold) -> None:
        """The sequence ended or was preempted: its cached pages become evictable, the
        last page first (so a prefix outlives its tail), the rest are freed."""
        for h in reversed(hold.shared):
            n = self.refs[h] - 1
            self.refs[h] = n
            if n == 0:
                self.lru[h] = None
        self.private -= hold.private
        hold.shared, hold.private = [], 0

    # --- internals --------------------------------------------------------------------
    def _ref(self, h: int) -> None:
        n = self.refs[h]
        if n == 0:
            del self.lru[h]
        self.refs[h] = n + 1

    def _make_room(self, pages: int) -> None:
        if self.capacity is None:
            return
        while self._free() < pages and self.lru:
            h, _ = self.lru.popitem(last=False)
            del self.refs[h]
            self._offload(h)

    def _offload(self, h: int) -> None:
        if self.cpu is None:
            return
        self.cpu[h] = None
        self.cpu.move_to_end(h)
        self.pages_offloaded += 1
        while len(self.cpu) > self.cpu_capacity:
            self.cpu.popitem(last=False)

    def load_seconds(self, cpu_tokens: int) -> float:
        """Time to bring ``cpu_tokens`` tokens' KV back from the CPU tier."""
        return cpu_tokens * self.cfg.kv_bytes_per_token / (self.cfg.offload_gbps * 1e9)
