"""One load-generating process: its own uvloop event loop, a keep-alive pool, and its share
of the run (a slice of the closed-loop concurrency, or its part of the open-loop schedule).

Request indices come from a counter shared by all workers, so the fleet keeps exactly
``max_concurrency`` requests in flight while work remains, whatever the worker count.
"""

from __future__ import annotations

import asyncio
import gc
import signal
import sys
import time
from dataclasses import dataclass

from infersweep.bench import runtime
from infersweep.bench.httpconn import ArrivalClock, Pool, build_head
from infersweep.bench.metrics import first_token_index
from infersweep.bench.stream import StreamSink
from infersweep.bench.tls import TLSConfig
from infersweep.bench.workload import Workload, auth_headers
from infersweep.lifeline import STOP_SIGNALS, die_with_parent, unblock

_now = time.monotonic_ns


@dataclass
class WorkerSpec:
    host: str
    port: int
    path: str
    num_workers: int
    concurrency_slices: list[int]   # per worker; 0 = unlimited (open loop without cap)
    schedule: list[float] | None    # open-loop send offsets (s); None = closed loop
    request_timeout: float
    idle_timeout: float
    keep_text: bool
    records_dir: str
    timestamp_source: str = "auto"  # auto | kernel | user (see httpconn.ArrivalClock)
    tls: TLSConfig | None = None    # https: trust settings (the context is made per worker)


class Shared:
    """Cross-process counters (created by the parent before forking).

    The start handshake: each worker finishes its warm-ups, then increments ``ready`` and
    waits; when every worker is ready the parent publishes ``t0_ns`` (a monotonic instant a
    little ahead), and every worker starts its measured requests at exactly that instant. A
    negative ``t0_ns`` tells waiting workers to stop (the run was interrupted or failed).
    """

    def __init__(self, ctx, num_workers: int):
        self.next_warm = ctx.Value("q", 0)
        self.next_req = ctx.Value("q", 0)
        self.completed = ctx.Value("q", 0)
        self.failed = ctx.Value("q", 0)
        self.chunks = ctx.Value("q", 0)
        self.ready = ctx.Value("q", 0)
        self.t0_ns = ctx.Value("q", 0)


def _take(counter) -> int:
    with counter.get_lock():
        i = counter.value
        counter.value = i + 1
    return i


class Worker:
    def __init__(self, wid: int, spec: WorkerSpec, work: Workload, warm: Workload | None,
                 shared: Shared):
        self.wid = wid
        self.spec = spec
        self.work = work
        self.warm = warm
        self.shared = shared
        self.clock = ArrivalClock(spec.timestamp_source)
        self.pool = Pool(spec.host, spec.port, clock=self.clock, tls=spec.tls)
        self.inflight: dict = {}
        self.records: list[bytes] = []
        self.done: list[tuple] = []
        self.lags: list[float] = []
        self.t0 = 0
        self.chunks = 0
        self.headers = auth_headers()
        self.stopped: int | None = None  # the stop signal, once one arrived
        self._task: asyncio.Task | None = None

    async def run(self) -> dict:
        loop = asyncio.get_running_loop()
        self._task = asyncio.current_task()
        for sig in STOP_SIGNALS:
            loop.add_signal_handler(sig, self._on_signal, sig)
        unblock()  # the parent held stop signals back around the fork
        self.clock.prime()  # kernel stamping on before any measured byte arrives
        watchdog = loop.create_task(self._watchdog())
        lagmon = None
        cpu0 = wall0 = None
        try:
            if self.warm is not None and len(self.warm.plan):
                await self._closed(self.warm, self.shared.next_warm, record=False)
            gc.collect()
            gc.freeze()
            # meet the other workers: the measured window starts after every warm-up
            with self.shared.ready.get_lock():
                self.shared.ready.value += 1
            while (t0 := self.shared.t0_ns.value) == 0:
                await asyncio.sleep(0.002)  # t0 is published 20 ms ahead: ample
            if t0 < 0:  # the parent called the run off (interrupted, or a worker failed)
                self.stopped = signal.SIGTERM
                raise asyncio.CancelledError
            self.t0 = t0
            delay = (self.t0 - _now()) / 1e9
            if delay > 0:
                await asyncio.sleep(delay)
            while _now() < self.t0:  # the loop's timer may wake a little early
                await asyncio.sleep(0.0002)
            self.clock.refresh()
            self.clock.reset_stats()  # count the measured run's reads only
            lagmon = loop.create_task(self._lag_monitor())
            cpu0, wall0 = time.process_time(), _now()
            if self.spec.schedule is None:
                await self._closed(self.work, self.shared.next_req, record=True)
            else:
                await self._open(self.work)
        except asyncio.CancelledError:
            if self.stopped is None:
                raise
        cpu1, wall1 = time.process_time(), _now()
        if lagmon is not None:
            lagmon.cancel()
        watchdog.cancel()
        for conn in list(self.inflight):
            conn.close()
        self.pool.close()
        self.clock.close()
        self.records = [self._record(*d) for d in self.done]
        meta = {"worker": self.wid, "chunks": self.chunks, "connections": self.pool.opened,
                "loop_lag_ms": self.lags, "timestamps": self.clock.summary()}
        if cpu0 is not None:
            meta.update(cpu_s=cpu1 - cpu0, wall_s=(wall1 - wall0) / 1e9)
        if self.stopped is not None:
            meta["interrupted"] = signal.Signals(self.stopped).name
        return meta

    def _on_signal(self, signum: int) -> None:
        """Stop taking requests; requests still in flight are dropped, finished ones kept."""
        if self.stopped is None:
            self.stopped = signum
            self._task.cancel()

    async def _closed(self, work: Workload, counter, record: bool) -> None:
        n = len(work.plan)
        slots = self.spec.concurrency_slices[self.wid] or n

        async def slot():
            while True:
                i = _take(counter)
                if i >= n:
                    return
                await self._one(work, i, record, None)

        await asyncio.gather(*(slot() for _ in range(min(slots, n))))

    async def _open(self, work: Workload) -> None:
        n, w = len(work.plan), self.spec.num_workers
        cap = self.spec.concurrency_slices[self.wid]
        sem = asyncio.Semaphore(cap) if cap else None
        tasks = []
        loop = asyncio.get_running_loop()
        for i in range(self.wid, n, w):
            due = self.t0 + int(self.spec.schedule[i] * 1e9)
            delay = (due - _now()) / 1e9
            if delay > 0:  # absolute deadlines: no drift from sequential sleeps
                await asyncio.sleep(delay)
            tasks.append(loop.create_task(self._gated(work, i, sem, due)))
        await asyncio.gather(*tasks)

    async def _gated(self, work, i, sem, due):
        if sem is None:
            return await self._one(work, i, True, due)
        async with sem:
            return await self._one(work, i, True, due)

    async def _one(self, work: Workload, i: int, record: bool, due: int | None) -> None:
        body = work.body(i)
        head = build_head("POST", self.spec.host, self.spec.port, self.spec.path, len(body),
                          self.headers)
        sink = StreamSink(keep_text=self.spec.keep_text, chat=work.chat,
                          max_output=int(work.plan.output_lens[i]))
        start = _now()
        sent = await self.pool.exchange(head, body, sink, self.inflight, start)
        end = _now()
        self.chunks += len(sink.chunk_t)
        if not record:
            return
        ok = not sink.error_class
        with (self.shared.completed if ok else self.shared.failed).get_lock():
            if ok:
                self.shared.completed.value += 1
            else:
                self.shared.failed.value += 1
        # records are serialised after the run: no per-request JSON work on the hot path
        self.done.append((i, work, sink, start, sent, end, due, ok))

    def _record(self, i, work, sink, start, sent, end, due, ok) -> bytes:
        t0 = self.t0
        ct = sink.chunk_t
        ft = first_token_index(sink.chunk_tok) if ct else None
        rec = {
            "id": i, "worker": self.wid, "ok": ok, "status": sink.status,
            "error_class": sink.error_class, "error": sink.error,
            "scheduled_s": None if due is None else round((due - t0) / 1e9, 6),
            "start_s": round((start - t0) / 1e9, 6),
            "sent_s": round((sent - t0) / 1e9, 6) if sent else None,
            "first_s": round((ct[0] - t0) / 1e9, 6) if ct else None,
            "first_token_s": round((ct[ft] - t0) / 1e9, 6) if ft is not None else None,
            "last_s": round((ct[-1] - t0) / 1e9, 6) if ct else None,
            "last_event_s": round((sink.last_event_t - t0) / 1e9, 6) if sink.last_event_t else None,
            "end_s": round((end - t0) / 1e9, 6),
            "chunk_gaps_us": _exact_gaps(ct, start),
            "chunk_tokens": sink.chunk_tok,
            "prompt_len": work.prompt_len(i),
            "intended_output_len": int(work.plan.output_lens[i]),
            "server_prompt_tokens": sink.usage_in,
            "cached_prompt_tokens": sink.cached_in,
            "output_tokens": sink.usage_out if sink.usage_out is not None else 0,
            "finish_reason": sink.finish_reason,
            "client_text_chunks": sink.text_chunks,
        }
        if self.spec.keep_text:
            rec["text"] = "".join(sink.text)
        return runtime.dumps(rec)

    async def _watchdog(self) -> None:
        req_ns = int(self.spec.request_timeout * 1e9)
        idle_ns = int(self.spec.idle_timeout * 1e9)
        while True:
            await asyncio.sleep(0.25)
            self.clock.refresh()  # follows steps of the wall clock (kernel stamps are wall time)
            now = _now()
            for conn, start in list(self.inflight.items()):
                last = max(conn.last_activity, start)
                if now - start > req_ns:
                    conn.abort("timeout", f"request exceeded --request-timeout "
                               f"{self.spec.request_timeout:g}s")
                elif now - last > idle_ns:
                    conn.abort("timeout", f"no bytes for --idle-timeout {self.spec.idle_timeout:g}s")

    async def _lag_monitor(self) -> None:
        period = 0.01
        while True:
            t = _now()
            await asyncio.sleep(period)
            self.lags.append(max(0.0, (_now() - t) / 1e6 - period * 1000))


def _exact_gaps(times: list[int], start: int) -> list[int]:
    """µs gaps whose running sum equals each time's µs offset from ``start`` (no drift)."""
    out = []
    prev_us = 0
    for t in times:
        us = (t - start) // 1000
        out.append(us - prev_us)
        prev_us = us
    return out


def worker_main(wid: int, spec: WorkerSpec, work: Workload, warm: Workload | None,
                shared: Shared, parent_pid: int) -> None:
    """Process entry point: run and write records + meta to ``records_dir``."""
    die_with_parent(parent_pid)
    for sig in STOP_SIGNALS:  # not the parent's handlers, inherited through fork
        signal.signal(sig, signal.SIG_DFL)
    runtime.install_event_loop()  # uvloop where installed, else asyncio's own loop
    w = Worker(wid, spec, work, warm, shared)
    try:
        meta = asyncio.run(w.run())
    except Exception as exc:  # noqa: BLE001 - report, don't lose the records
        meta = {"worker": wid, "fatal": f"{type(exc).__name__}: {exc}"}
    try:
        with open(f"{spec.records_dir}/part-{wid}.jsonl", "wb") as f:
            for line in w.records:
                f.write(line + b"\n")
        with open(f"{spec.records_dir}/meta-{wid}.json", "wb") as f:
            f.write(runtime.dumps(meta))
    except OSError as exc:  # the parent reports the worker's records as missing
        sys.stderr.write(f"error: client worker {wid} cannot write its records to "
                         f"{spec.records_dir}: {exc.strerror or exc}\n")
