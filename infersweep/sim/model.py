"""Performance models that decide when each token is produced.

``Engine`` models continuous batching: every step decodes one token for each running
sequence and spends the rest of its token budget on prefill (chunked prefill). Step time is
``decode_base + decode_per_seq * batch + prefill_tokens / prefill_tps``, so latency grows with
load; ``max_num_seqs`` caps admitted sequences and the rest queue. With a KV model
(``ModelParams.kv``, see kvcache.py) a request is admitted only when its pages fit, cached
prompt tokens skip prefill, pages loaded from the CPU tier delay that request's prefill, and
a running sequence that needs a page when none is free preempts the newest admitted one
(it goes back to the front of the queue and recomputes later, as vLLM does). ``Fixed`` is the
ground-truth pacer: every admitted request gets its first token after ``ttft`` and the next
ones every ``itl`` on absolute deadlines, independent of load. A server with DP ranks runs one
model per rank, each with these limits.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import time
from collections import deque
from dataclasses import dataclass, field

from infersweep.sim.kvcache import Hold, KVConfig, KVPool

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
    kv: KVConfig = field(default_factory=KVConfig)


class Engine:
    def __init__(self, p: ModelParams):
        self.p = p
        self.waiting: deque = deque()   # not admitted yet
        self.prefilling: deque = deque()  # admitted, prompt not fully processed
        self.running: list = []
        self._wake = asyncio.Event()
        self.steps = 0
        self.lag_ns_max = 0
        self.kv = KVPool(p.kv) if p.kv.enabled else None
        self.preemptions = 0
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
            s = self.waiting[0]
            if s.done:
                self.waiting.popleft()
                continue
            if self.kv is not None and not self._take_pages(s):
                break  # first come, first served: the head waits until its pages fit
            self.waiting.popleft()
            s.admit_ns = _now()
            (self.prefilling if s.prefill_left > 0 else self.running).append(s)

    def _take_pages(self, s) -> bool:
        """Reserve ``s``'s pages; cached tokens shorten its prefill. False: no room yet."""
        kv = self.kv
        generated = s.sent + s.pending
        n = s.prompt_tokens + generated
        first = s.kv_hold is None  # a preempted request's recompute is not a new lookup
        hold = Hold(s.page_hashes)
        remote = s.prefill_left <= 0  # decode role: the prompt's KV came from a prefill worker
        got = kv.admit(hold, n, count=first and not remote, force=self.admitted == 0,
                       extra_tokens=1)
        if got is None:
            return False
        s.kv_hold = hold
        gpu, cpu = got
        if remote:
            kv.commit(hold)
            return True
        if first:
            s.cached_tokens = gpu + cpu
        s.prefill_left = n - gpu - cpu
        if cpu:
            s.ready_ns = _now() + int(kv.load_seconds(cpu) * 1e9)
        return True

    def _release(self, s) -> None:
        if self.kv is not None and s.kv_hold is not None:
            self.kv.release(s.kv_hold)

    def _make_room_for_decode(self) -> None:
        """Every running sequence gets the page its next token needs; when none is free
        the newest admitted sequence is preempted (possibly the one asking)."""
        kv = self.kv
        for s in list(self.running):
            if s.done or s.kv_hold is None or s.kv_hold.pages == 0:
                continue  # ended, or preempted earlier in this pass
            need = s.prompt_tokens + s.sent + s.pending + 1
            while not kv.grow(s.kv_hold, need, force=self.admitted == 1):
                victim = max((x for x in (*self.running, *self.prefilling) if not x.done),
                             key=lambda x: x.admit_ns)
                self._preempt(victim)
                if victim is s:
                    break

    def _preempt(self, s) -> None:
        if s in self.running:
            self.running.remove(s)
        else:
            self.prefilling.remove(s)
        self._release(s)
        s.prefill_left = s.prompt_tokens + s.sent + s.pending  # recomputed on readmission
        s.ready_ns = 0
        self.waiting.appendleft(s)
        self.preemptions += 1

    async def _loop(self) -> None:
        p = self.p
        interval = p.stream_interval
        kv = self.kv
        while True:
            self._admit()
            if not self.running and not self.prefilling:
                self._wake.clear()
                await self._wake.wait()
                continue
            if kv is not None:
                self._make_room_for_decode()
            budget = max(0, p.max_num_batched_tokens - len(self.running))
            chunks = []
            now = _now()
            loading = 0
            for s in self.prefilling:
                if budget <= 0:
                    break
                if s.ready_ns > now:  # its pages are still coming back from the CPU tier
                    loading = min(loading, s.ready_ns) if loading else s.ready_ns
                    continue
                take = min(budget, s.prefill_left)
                chunks.append((s, take))
                budget -= take
            if not self.running and not chunks:
                if loading:  # only loads in flight: wait for the first, or a new arrival
                    self._wake.clear()
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._wake.wait(), (loading - now) / 1e9)
                else:  # everything left was preempted: admit again
                    await asyncio.sleep(0)
                continue
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
                    self._release(s)
                    continue
                still.append(s)
            for s, take in chunks:
                s.prefill_left -= take
            newly = [s for s in self.prefilling if s.prefill_left <= 0]
            if newly:
                self.prefilling = deque(s for s in self.prefilling if s.prefill_left > 0)
            # the prefill step produces each sequence's first token
            for s in newly:
                if kv is not None and s.kv_hold is not None:
                    kv.commit(s.kv_hold)
                if not s.done and not s.emit(1, interval):
                    still.append(s)
                else:
                    self._release(s)
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
