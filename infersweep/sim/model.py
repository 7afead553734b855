"""Performance models that decide when each token is produced.

``Engine`` models continuous batching: every step decodes one token for each running
sequence and spends the rest of its token budget on prefill (chunked prefill). Step time is
``decode_base + decode_per_seq * batch + prefill_tokens / prefill_tps``, so latency grows with
load; ``max_num_seqs`` caps admitted sequences and the rest queue. ``Fixed`` is the
ground-truth pacer: every admitted request gets its first token after ``ttft`` and the next
ones every ``itl`` on absolute deadlines, independent of load. A server with DP ranks runs one
model per rank, each with these limits.
"""

from __future__ import annotations

import asyncio
import heapq
import time
from collections import deque
from dataclasses import dataclass

_now = time.monotonic_ns


@dataclass
class ModelParams:
    prefill_tps: float = 40000.0
    decode_base_ms: float = 12.0
    decode_per_seq_ms: float = 0.02
    max_num_seqs: int = 256
    max_num_batched_tokens: int = 8192
    stream_interval: int = 1
    fixed_ttft_ms: float | None = None
    fixed_itl_ms: float | None = None


class Engine:
    def __init__(self, p: ModelParams):
        self.p = p
        self.waiting: deque = deque()   # not admitted yet
        self.prefilling: deque = deque()  # admitted, prompt not fully processed
        self.running: list = []
        self._wake = asyncio.Event()
        self.steps = 0
        self.lag_ns_max = 0
        self.task = asyncio.get_running_loop().create_task(self._loop())

    @property
    def admitted(self) -> int:
        return len(self.prefilling) + len(self.running)

    def submit(self, s, prefilled: bool = False) -> None:
        if prefilled:
            s.prefill_left = 0
        self.waiting.append(s)
        self._wake.set()

    def _admit(self) -> None:
        while self.waiting and self.admitted < self.p.max_num_seqs:
            s = self.waiting.popleft()
            if s.done:
                continue
            s.admit_ns = _now()
            (self.prefilling if s.prefill_left > 0 else self.running).append(s)

    async def _loop(self) -> None:
        p = self.p
        interval = p.stream_interval
        while True:
            self._admit()
            if not self.running and not self.prefilling:
                self._wake.clear()
                await self._wake.wait()
                continue
            budget = max(0, p.max_num_batched_tokens - len(self.running))
            chunks = []
            for s in self.prefilling:
                if budget <= 0:
                    break
                take = min(budget, s.prefill_left)
                chunks.append((s, take))
                budget -= take
            ptoks = sum(t for _, t in chunks)
            dur_ms = (p.decode_base_ms + p.decode_per_seq_ms * len(self.running)
                      + 1000.0 * ptoks / p.prefill_tps)
            t_start = _now()
            await asyncio.sleep(dur_ms / 1000.0)
            late = _now() - t_start - int(dur_ms * 1e6)
            self.lag_ns_max = max(self.lag_ns_max, late)
            self.steps += 1
            still = []
            for s in self.running:
                if s.done or s.emit(1, interval) is True:
                    continue
                still.append(s)
            for s, take in chunks:
                s.prefill_left -= take
            newly = []
            while self.prefilling and self.prefilling[0].prefill_left <= 0:
                newly.append(self.prefilling.popleft())
            # the prefill step produces each sequence's first token
            for s in newly:
                if not s.done and not s.emit(1, interval):
                    still.append(s)
            self.running = still


class Fixed:
    """Load-independent schedule (for measuring a client against known truth)."""

    def __init__(self, p: ModelParams):
        self.p = p
        self.ttft = int((p.fixed_ttft_ms or 0) * 1e6)
        self.itl = int((p.fixed_itl_ms or 20.0) * 1e6)
        self.heap: list = []
        self.waiting: deque = deque()
        self.active = 0
        self._seq = 0
        self._timer = None
        self.lag_ns_max = 0
        self.steps = 0
        self.running: list = []
        self.prefilling: deque = deque()

    @property
    def admitted(self) -> int:
        return self.active

    def submit(self, s, prefilled: bool = False) -> None:
        self.waiting.append(s)
        self._admit()

    def _admit(self) -> None:
        while self.waiting and self.active < self.p.max_num_seqs:
            s = self.waiting.popleft()
            if s.done:
                continue
            self.active += 1
            s.admit_ns = _now()
            base = max(s.arrival_ns, s.admit_ns) + self.ttft
            s._base = base
            self._push(base, s)

    def _push(self, due: int, s) -> None:
        self._seq += 1
        heapq.heappush(self.heap, (due, self._seq, s))
        if self._timer is None or due < self._timer_due:
            self._arm(due)

    def _arm(self, due: int) -> None:
        if self._timer is not None:
            self._timer.cancel()
        loop = asyncio.get_running_loop()
        self._timer_due = due
        self._timer = loop.call_at(loop.time() + max(0, due - _now()) / 1e9, self._fire)

    def _fire(self) -> None:
        self._timer = None
        now = _now()
        heap = self.heap
        interval = self.p.stream_interval
        freed = 0
        while heap and heap[0][0] <= now + 200_000:  # 0.2 ms early is on time
            due, _, s = heapq.heappop(heap)
            self.lag_ns_max = max(self.lag_ns_max, now - due)
            self.steps += 1
            if s.done or s.emit(interval, interval):
                freed += 1
                continue
            self._seq += 1
            heapq.heappush(heap, (s._base + s.sent * self.itl, self._seq, s))
        if freed:
            self.active -= freed
            self._admit()
        if heap and self._timer is None:
            self._arm(heap[0][0])
