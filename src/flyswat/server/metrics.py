"""``GET /metrics``: what an operator watches, in Prometheus' text format.

- ``flyswat_players`` (open game connections), ``flyswat_tables{state}`` (tables in this
  node's memory), ``flyswat_nodes`` (live nodes it sees), ``flyswat_store_queue`` (commands
  waiting for the store): gauges, read when scraped;
- ``flyswat_messages_received_total`` / ``flyswat_messages_sent_total``: WebSocket
  messages, counted by the runner;
- ``flyswat_round_result_seconds``: from the command that closed a slap round (the last
  hand, or its deadline) to the round's result queued on its sockets — the server's own
  share of what players wait for (store commit included);
- ``flyswat_store_commit_seconds``: each group commit's time (the writer thread's);
- ``flyswat_setups_waited_total``, ``flyswat_setups_refused_total`` and
  ``flyswat_setup_budget``: creates and joins that waited while the loop ran late, those
  answered ``busy`` after :data:`~flyswat.server.admission.MAX_WAIT_S`, and how many the
  door now lets in each period (:mod:`flyswat.server.admission`);
- ``flyswat_loop_stall_seconds``: how late the event loop ran a timer set every 50 ms — a
  stall holds every table of the node (``flyswat_loop_stall_max_seconds``: the longest);
- ``flyswat_heap_blocks`` (the live heap: flat under a steady load, or it grows),
  ``flyswat_gc_collections_total{generation}`` and ``flyswat_gc_collected_total{generation}``
  (objects found to be cyclic garbage). Nothing here walks the heap: counting the frozen
  objects (``gc.get_freeze_count``) walks every one of them, and held the loop 100 ms at
  each scrape of a 3,000-player server.

Each app has a registry of its own, so that servers in one process (tests) share nothing.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import sys
import threading
import time
import traceback
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime
from types import FrameType
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from starlette.requests import Request
from starlette.responses import Response

from flyswat.server.limits import AddressBuckets
from flyswat.server.transport import client_address, refusal

if TYPE_CHECKING:
    from flyswat.server.runner import Runner

#: Histogram buckets, in seconds: a few ms (a commit) up to the 100 ms the rhythm allows, and
#: past it.
BUCKETS = (0.001, 0.002, 0.005, 0.01, 0.02, 0.025, 0.05, 0.1, 0.2, 0.25, 0.5, 1.0, 2.5)
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
#: A stall of the event loop longer than this (s) is logged with what the loop was running
#: (``flyswat serve --stall-log-ms``).
STALL_TELL_S = 0.1

stall_log = logging.getLogger("flyswat.stall")
#: Where the loop's thread is when it waits for events (uvloop's wait is in C, under these).
IDLE = frozenset({"run_until_complete", "run_forever", "select", "_run_once"})


def _idle(frame: FrameType) -> bool:
    """The loop's thread is in the loop's own C code, not in a Python callback: waiting for
    events, reading or writing sockets, or waiting to take the interpreter back from another
    thread (the store's writer, the players' SQL). uvloop's whole loop is C under asyncio's
    ``Runner.run``; asyncio's own waits in ``select``."""
    code = frame.f_code
    runner = code.co_filename.endswith(("asyncio/runners.py", "uvloop/__init__.py"))
    return code.co_name in IDLE or (code.co_name == "run" and runner)


def open_sched(tid: int) -> int | None:
    """A file descriptor on a thread's ``schedstat`` (Linux), kept open so that each
    :func:`sched_ms` is one read; None where the kernel does not tell."""
    try:
        return os.open(f"/proc/self/task/{tid}/schedstat", os.O_RDONLY)
    except OSError:
        return None


def sched_ms(fd: int | None) -> tuple[float, float] | None:
    """The thread's time on a core and its time runnable but waiting for one, in ms since
    it started, from :func:`open_sched`'s descriptor."""
    if fd is None:
        return None
    try:
        ran, waited, _ = os.pread(fd, 128, 0).split()
    except (OSError, ValueError):
        return None
    return int(ran) / 1e6, int(waited) / 1e6


def stall_split(
    before: tuple[float, float] | None, after: tuple[float, float] | None, span_ms: float
) -> str:
    """What the loop's thread did over ``span_ms`` between two :func:`sched_ms` readings:
    ran (a callback, or the loop's C code on sockets), waited for a core (a busy machine),
    or neither (asleep: waiting for events, or for the interpreter another thread held)."""
    if before is None or after is None:
        return ""
    ran, waited = after[0] - before[0], after[1] - before[1]
    return (f" (of the last {span_ms:.0f} ms: ran {ran:.0f}, waited for a core {waited:.0f}, "
            f"asleep {max(0.0, span_ms - ran - waited):.0f})")  # fmt: skip


#: What :meth:`Metrics.counts` counts, as a stall's line names it.
SPAN_COUNTS = ("messages in", "out", "commands", "sockets written", "commits told", "set-ups")


def span_held(before: tuple[int, ...], after: tuple[int, ...]) -> str:
    """What the loop did between two :meth:`Metrics.counts`: a long turn of many small
    callbacks (messages, commands, writes in the thousands) or of a few long ones."""
    done = zip(SPAN_COUNTS, before, after, strict=True)
    return "; meanwhile " + ", ".join(f"{b - a} {name}" for name, a, b in done)


def watch_stalls(beat: list[float], main: int, tell_s: float, stop: threading.Event) -> None:
    """Look at when the loop's next beat was due (``beat[0]``, set by
    :meth:`Metrics.watch_loop` every 50 ms) at the moment it would be ``tell_s`` late: if it
    is, log the stack of the loop's thread (``main``) as it is then — where the loop is
    stuck, caught in the act, once per stall. A beat on time has moved ``beat[0]`` on by
    then, and the watch sleeps again until that one would be late: it wakes about once a
    beat (each wake takes the interpreter's lock from the loop), not every few ms."""
    told = 0.0
    wait = tell_s / 4
    while not stop.wait(wait):
        due = beat[0]
        late = time.perf_counter() - due
        if due == told or late < tell_s:  # told already (look again soon), or not yet late
            wait = tell_s / 4 if due == told else max(tell_s / 4, tell_s - late)
            continue
        frame = sys._current_frames().get(main)
        if frame is None:
            return
        told = due
        late_ms = (time.perf_counter() - due) * 1000
        if _idle(frame):  # between two callbacks (or waiting for events: no core)
            stall_log.warning("the event loop is %.0f ms late, idle: caught between two "
                              "callbacks — a turn of many callbacks one after another (a "
                              "burst of messages and requests), or the process was not given "
                              "a core (a busy machine), or its loop was in C (reading or "
                              "writing sockets, or waiting for the interpreter another thread "
                              "holds)", late_ms)  # fmt: skip
            continue
        stack = "".join(traceback.format_stack(frame, limit=12))
        stall_log.warning("the event loop is %.0f ms late; it is in:\n%s",
                          late_ms, stack)  # fmt: skip


class _Now(Collector):
    def __init__(self, runner: Runner) -> None:
        self.runner = runner

    def collect(self) -> Iterator[Metric]:
        runner, executor = self.runner, self.runner.executor
        yield GaugeMetricFamily("flyswat_players", "open game connections", len(executor.links))
        tables = GaugeMetricFamily("flyswat_tables", "tables in memory", labels=["state"])
        by_state = Counter(t.state for t in runner.directory.tables.values())
        for state in ("lobby", "playing", "over", "expired"):
            tables.add_metric([state], by_state.get(state, 0))
        yield tables
        peers = runner.cluster.peers if runner.cluster is not None else {}
        yield GaugeMetricFamily("flyswat_nodes", "live nodes of the cluster", max(1, len(peers)))
        queued = executor.writer.queued if executor.writer is not None else 0
        yield GaugeMetricFamily("flyswat_store_queue", "submissions not yet committed", queued)
        yield CounterMetricFamily(
            "flyswat_messages_received", "WebSocket messages received", executor.received
        )
        if executor.metrics is not None:
            yield GaugeMetricFamily(
                "flyswat_loop_stall_max_seconds", "the longest stall", executor.metrics.stall_max
            )
        yield GaugeMetricFamily(
            "flyswat_heap_blocks",
            "memory blocks the interpreter holds (sys.getallocatedblocks: the live heap, "
            "counted without walking it)",
            sys.getallocatedblocks(),
        )
        runs = CounterMetricFamily("flyswat_gc_collections", "collections", labels=["generation"])
        found = CounterMetricFamily("flyswat_gc_collected", "cyclic garbage", labels=["generation"])
        for generation, stats in enumerate(gc.get_stats()):
            runs.add_metric([str(generation)], stats["collections"])
            found.add_metric([str(generation)], stats["collected"])
        yield runs
        yield found
        yield CounterMetricFamily("flyswat_messages_sent", "WebSocket messages sent", executor.sent)
        door = runner.admission
        yield CounterMetricFamily(
            "flyswat_setups_waited", "creates and joins that waited for the loop", door.waited
        )
        yield CounterMetricFamily(
            "flyswat_setups_refused", "creates and joins answered busy after waiting", door.refused
        )
        yield GaugeMetricFamily(
            "flyswat_setup_budget", "creates and joins let in a period", door.pace.budget
        )


class Metrics:
    """The metrics of one server (one runner)."""

    def __init__(self, runner: Runner, scrapes: AddressBuckets | None = None) -> None:
        self.scrapes = scrapes  # per address (--scrapes-per-minute): a scrape costs ms at load
        self.registry = CollectorRegistry()
        self.registry.register(_Now(runner))
        self.round_result = Histogram(
            "flyswat_round_result_seconds",
            "a slap round's closing command to its result queued",
            buckets=BUCKETS,
            registry=self.registry,
        )
        self.commit = Histogram(
            "flyswat_store_commit_seconds",
            "one group commit of the store",
            buckets=BUCKETS,
            registry=self.registry,
        )
        self.stall = Histogram(
            "flyswat_loop_stall_seconds",
            "how late the event loop ran a timer set every 50 ms",
            buckets=BUCKETS,
            registry=self.registry,
        )
        self.stall_max = 0.0
        self.runner = runner
        runner.executor.metrics = self

    async def watch_loop(self, every_s: float = 0.05, tell_s: float = STALL_TELL_S) -> None:
        """Measure the event loop's stalls: a timer's lateness, every ``every_s``; and, from
        a thread of its own, name what the loop was doing when one passed ``tell_s``
        (:func:`watch_stalls`)."""
        beat = [time.perf_counter() + every_s]  # when the next beat is due
        stop = threading.Event()
        main, sched = threading.get_ident(), open_sched(threading.get_native_id())
        threading.Thread(target=watch_stalls, args=(beat, main, tell_s, stop),
                         name="flyswat-stall-watch", daemon=True).start()  # fmt: skip
        try:
            while True:
                due = beat[0] = time.perf_counter() + every_s
                at, counts = sched_ms(sched), self.counts()
                await asyncio.sleep(every_s)
                now = time.perf_counter()
                late = max(0.0, now - due)
                self.stall.observe(late)
                self.stall_max = max(self.stall_max, late)
                if late > tell_s:  # its whole length, once it is over (where: the watch's line)
                    split = stall_split(at, sched_ms(sched), (now - due + every_s) * 1000)
                    held = span_held(counts, self.counts())
                    ended = datetime.now(UTC).isoformat(timespec="milliseconds")
                    stall_log.warning("the event loop stalled for %.0f ms%s%s; it ended at %s",
                                      late * 1000, split, held, ended)  # fmt: skip
        finally:
            stop.set()
            if sched is not None:
                os.close(sched)

    def counts(self) -> tuple[int, ...]:
        """What the node has done so far, counted (:data:`SPAN_COUNTS`)."""
        executor = self.runner.executor
        return (executor.received, executor.sent, executor.outcomes, executor.flushes,
                executor.commits, self.runner.admission.admitted)  # fmt: skip

    async def endpoint(self, request: Request) -> Response:
        if self.scrapes is not None:
            refused = refusal(self.scrapes, client_address(request.scope), time.monotonic())
            if refused is not None:
                return refused
        return Response(generate_latest(self.registry), media_type=CONTENT_TYPE)
