"""The executor: carries out what the sans-I/O tables ask, on one event loop.

:meth:`Executor.run` hands a command to a table with the clock's ``now`` and carries out the
outcome in one rule: **store, then tell** — the outcome's events are committed (by the
group-commit :class:`~flyswat.server.writer.Writer`) before any of its messages is queued. The
tables never await, so each command is atomic on the loop. Each table has one wake-up (its
:attr:`~flyswat.table.core.Table.wake_at`), all of them under one timer of the loop's, and each
connection a
:class:`~flyswat.server.connection.Link` written once per loop turn, however many messages it
got.

It keeps no table itself: it is handed them, and finds a timer's table in the node's
directory (``tables``), which it tells when a table may be finished (``idle``). What it asks
of a table and of a link is :class:`Ticking` and :class:`Outlet` (a
:class:`~flyswat.table.core.Table` and a :class:`~flyswat.server.connection.Link` are
those): compiled (``hatch_build.py``), a protocol is taken as it comes, so its tests drive it
with stand-ins.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import logging
import math
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from flyswat.errors import IllegalActionError
from flyswat.server.connection import WATCHER_PING_EVERY_S, Pinger
from flyswat.server.frames import text_frame
from flyswat.server.store import Store
from flyswat.server.writer import Writer
from flyswat.server.writer_process import WriterProcess
from flyswat.table.events import Closed
from flyswat.table.io import Command, Fanout, Gone, Outcome, Tick

log = logging.getLogger("flyswat.server")

#: Links written in one go from the spectators' queue (:meth:`Executor.flush_later`): a
#: featured game's thousands of writes are spread over loop turns, so that the players'
#: messages that come meanwhile are read between them.
WATCHER_BATCH = 500


class Ticking(Protocol):
    """What the executor asks of a table (:class:`flyswat.table.core.Table`)."""

    @property
    def code(self) -> str: ...

    @property
    def wake_at(self) -> float | None: ...

    def handle(self, command: Command, now: float) -> Outcome: ...

    def observe(
        self, conn: int, ms: float | None, network_ms: float | None, now: float
    ) -> None: ...

    def delivered(self, conn_id: int, turn: int, now: float) -> None: ...


class Outlet(Protocol):
    """What the executor asks of a connection's link (:class:`flyswat.server.connection.Link`)."""

    @property
    def id(self) -> int: ...

    def send(self, frame: bytes, mark: int | None = None, later: bool = False) -> None: ...

    def flush(self) -> None: ...

    def close(self, code: int, reason: str) -> None: ...

    def moved(self, url: str | None) -> None: ...


L = TypeVar("L", bound=Outlet)


@dataclass(slots=True)
class _Untold:
    """An outcome of a table waiting to be told: its events are ``storing``, or an earlier
    outcome's are; ``told`` (a future) is resolved when it has been."""

    outcome: Outcome | None
    storing: bool
    told: asyncio.Future[None] | None = None
    at: float = 0.0  # perf_counter when the command was carried out


def _write(links: list[Outlet]) -> None:
    """Flush each link's frames; one socket's failure must not keep the others' frames."""
    for link in links:
        try:
            link.flush()
        except Exception:
            log.exception("writing to connection %d failed", link.id)


def monotonic_ms() -> float:
    """The clock the tables run on, in ms: the same one as the asyncio loop's timers."""
    return time.monotonic() * 1000.0


class Executor:
    """Store, then tell; the tables' timers; the connections' writes."""

    def __init__(
        self, store: Store, tables: Mapping[str, Ticking], idle: Callable[[Ticking], None],
        clock: Callable[[], float] = monotonic_ms,
    ) -> None:  # fmt: skip
        """``tables``: the node's tables by code (a timer's table is looked up there);
        ``idle(table)``: called when a table has nothing left to store or tell (it may be
        finished: the directory forgets it then)."""
        self.store = store
        self.tables = tables
        self.idle = idle
        self.clock = clock
        self.links: dict[int, Outlet] = {}
        self._dirty: list[Outlet] = []  # links with frames to write at the end of the turn
        self._later: deque[Outlet] = deque()  # spectators' links, written after them
        self._flushing = False  # a flush is planned
        self.pinger = Pinger()
        self.watch_pinger = Pinger(WATCHER_PING_EVERY_S)
        #: Each table's wake-up (table time), and the same in a heap, soonest first; an
        #: entry whose time is not its table's any more is passed over when it comes up.
        self._wakes: dict[str, float] = {}
        self._heap: list[tuple[float, str]] = []
        #: The loop's one timer, for the soonest wake-up, and the table time it is set for.
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at: float | None = None
        #: Per table, its outcomes not told yet, oldest first (:meth:`carry_out`).
        self._untold: dict[str, deque[_Untold]] = {}
        #: The group-commit writer (:meth:`start`); without one, each outcome is stored on
        #: the spot, synchronously.
        self.writer: Writer | WriterProcess | None = None
        self._ids = itertools.count(1)
        #: Tables handed over (shut down) or lost (fenced): commands are not taken.
        self.draining = False
        self.received = 0  # WebSocket messages, for the metrics
        self.sent = 0
        self.outcomes = 0  # commands carried out (the stall watch's count of a span)
        self.flushes = 0  # links written: a socket's write each
        self.commits = 0  # commits whose outcomes were told
        self.metrics: Any = None  # flyswat.server.metrics.Metrics, when served
        #: The loop :meth:`start` ran on: ``asyncio.get_running_loop()`` asks the system for
        #: the process id at every call (Python 3.11), and timers and flushes are planned
        #: several times a message.
        self._loop: asyncio.AbstractEventLoop | None = None

    # -- the one rule ----------------------------------------------------------------------

    def run(self, table: Ticking, command: Command) -> Outcome:
        """Hand ``command`` to ``table`` now and carry out the outcome; a refused HTTP
        command raises :class:`~flyswat.errors.FlyswatError` having changed nothing."""
        if self.draining:
            raise IllegalActionError("this table is moving to another node: try again", "moved")
        outcome = table.handle(command, self.clock())
        self.carry_out(table, outcome)
        return outcome

    def observe(
        self, table: Ticking, conn: int, ms: float | None, network_ms: float | None
    ) -> None:
        """Round trips measured on connection ``conn`` of ``table`` (a
        :class:`~flyswat.table.io.Rtt`'s fields, without making one a pong): they change what
        the arbiter allows, nothing to store, tell or wake for."""
        if not self.draining:
            table.observe(conn, ms, network_ms, self.clock())

    async def act(self, table: Ticking, command: Command) -> Outcome:
        """:meth:`run`, returning once the outcome's events are stored (an HTTP reply)."""
        outcome = self.run(table, command)
        await self.stored(table)
        return outcome

    async def stored(self, table: Ticking) -> None:
        """Return once everything ``table`` did so far is stored and told."""
        untold = self._untold.get(table.code)
        if untold:
            waiter = _Untold(None, storing=False, told=asyncio.get_running_loop().create_future())
            untold.append(waiter)
            await waiter.told  # type: ignore[misc]

    def pending(self, code: str) -> bool:
        """Table ``code`` has outcomes not yet stored or told."""
        return code in self._untold

    def carry_out(self, table: Ticking, outcome: Outcome) -> None:
        """Store the events, then (once they are committed) deliver the messages and closes;
        set the table's wake-up at once. A table's outcomes are told in the order they came,
        so one that stores nothing waits behind the ones still being stored. An outcome
        that ended a game is stored and told in two parts (:meth:`Outcome.parts`): the
        game's end waits for its own commit, the last round's result does not."""
        self.outcomes += 1
        for part in outcome.parts():
            self._carry_out(table, part)
        self._schedule(table)

    def _carry_out(self, table: Ticking, outcome: Outcome) -> None:
        code = table.code
        untold = self._untold.get(code)
        if outcome.events and self.writer is None:
            self.store.append_all(code, outcome.events)
        if outcome.events and self.writer is not None:
            entry = _Untold(outcome, storing=True, at=time.perf_counter())
            self._untold.setdefault(code, deque()).append(entry)
            self.writer.submit(code, outcome.events, lambda: self._committed(table, entry))
        elif untold:
            untold.append(_Untold(outcome, storing=False))
        else:
            self.tell(outcome)

    def _committed(self, table: Ticking, entry: _Untold) -> None:
        entry.storing = False  # stored: told once those before it are
        untold = self._untold.get(table.code)
        while untold and not untold[0].storing:
            first = untold.popleft()
            if first.outcome is not None:
                self.tell(first.outcome)
                if self.metrics is not None and any(
                    isinstance(e, Closed) for e in first.outcome.events
                ):
                    self.metrics.round_result.observe(time.perf_counter() - first.at)
            if first.told is not None and not first.told.done():
                first.told.set_result(None)
        if not untold:
            self._untold.pop(table.code, None)
            self.idle(table)

    def tell(self, outcome: Outcome) -> None:
        """Queue an outcome's messages and closes on their connections: a message sent to
        many (a broadcast's shared part, a fan-out to every spectator) is framed once, and
        the same bytes queued on each of its links."""
        frames: dict[int, bytes] = {}
        links = self.links
        for send in outcome.sends:
            key = id(send.message)
            frame = frames.get(key)
            if frame is None:
                message = send.message
                data = message if isinstance(message, bytes) else message.model_dump_json()
                frame = frames[key] = text_frame(data if isinstance(data, bytes) else data.encode())
            if isinstance(send, Fanout):
                self.sent += len(send.conns)
                for conn in send.conns:
                    link = links.get(conn)
                    if link is not None:
                        link.send(frame, later=True)
                continue
            self.sent += 1
            link = links.get(send.conn)
            if link is not None:
                link.send(frame, send.mark)
        for close in outcome.closes:
            link = self.links.get(close.conn)
            if link is not None:
                link.close(close.code, close.reason)

    # -- timers ----------------------------------------------------------------------------
    #
    # One loop timer for every table: the soonest wake-up. A timer of the loop's own for
    # each table, set anew whenever its deadline moved (several times a second a table:
    # each reveal, slap and hand count), was a timer made, started, stopped and closed in
    # the loop's C code each time — thousands a second, and a loop turn that stopped
    # thousands of them closed them all at its end in one go (docs/BENCHMARKS.md, *One
    # timer for every table*).

    def _schedule(self, table: Ticking) -> None:
        wake, code = table.wake_at, table.code
        if self._wakes.get(code) == wake:
            return  # the wake-up set is the one (most commands change no deadline)
        if wake is None:
            self.cancel(code)
            return
        self._wakes[code] = wake
        heap = self._heap
        if len(heap) > 2 * len(self._wakes) + 1024:  # mostly passed-over entries: rebuild
            heap[:] = [(when, c) for c, when in self._wakes.items()]
            heapq.heapify(heap)
        else:
            heapq.heappush(heap, (wake, code))
        if self._timer_at is None or wake < self._timer_at:
            self._arm(wake)

    def _arm(self, when: float) -> None:
        """Set the loop's timer for table time ``when`` (half a ms after it: the loop's
        timers count whole ms)."""
        if self._timer is not None:
            self._timer.cancel()
        delay = max(0.0, (when - self.clock()) / 1000) + 0.0005
        loop = self._loop or asyncio.get_running_loop()
        self._timer = loop.call_later(delay, self._fire)
        self._timer_at = when

    def _fire(self) -> None:
        """The loop's timer: tick every table whose wake-up has come, then set the timer
        for the next. A table's new wake-up that has come already is ticked at the next
        turn of the loop, not in this one."""
        self._timer = None
        self._timer_at = -math.inf  # the ticks' new wake-ups set no timer: set below
        heap, wakes, now = self._heap, self._wakes, self.clock()
        due: list[str] = []
        while heap and heap[0][0] <= now:
            when, code = heapq.heappop(heap)
            if wakes.get(code) == when:
                del wakes[code]
                due.append(code)
        for code in due:
            self._tick(code)
        self._timer_at = None
        while heap and wakes.get(heap[0][1]) != heap[0][0]:
            heapq.heappop(heap)  # passed over
        if heap:
            self._arm(heap[0][0])

    def _tick(self, code: str) -> None:
        table = self.tables.get(code)
        if table is None:
            return
        try:
            self.run(table, Tick())
        except Exception:  # a table's bug must not stop the loop's other tables
            log.exception("table %s failed on its timer", code)
        self.idle(table)

    def cancel(self, code: str) -> None:
        """Forget table ``code``'s wake-up, if it has one (its heap entry is passed over)."""
        self._wakes.pop(code, None)

    def drop(self, code: str) -> None:
        """Table ``code`` is not this node's any more: its timer stops, and its outcomes not
        told are never told (an HTTP command waiting on them is told to try again)."""
        self.cancel(code)
        for entry in self._untold.pop(code, ()):
            if entry.told is not None and not entry.told.done():
                gone = IllegalActionError("the table moved to another node: try again", "moved")
                entry.told.set_exception(gone)

    # -- connections -----------------------------------------------------------------------

    def link(self, table: Ticking, make: Callable[[int, Callable[[int], None]], L]) -> L:
        """A new connection to ``table``: ``make(id, on_sent)`` builds its link."""
        conn = next(self._ids)

        def on_sent(turn: int) -> None:
            if conn in self.links and not self.draining:
                table.delivered(conn, turn, self.clock())  # nothing to store or tell
                self._schedule(table)  # the round's deadline may move

        link = make(conn, on_sent)
        self.links[conn] = link
        return link

    def unlink(self, table: Ticking, link: Outlet) -> None:
        """``link`` closed: tell its table, forget the link."""
        self.links.pop(link.id, None)
        if table.code in self.tables and not self.draining:
            self.run(table, Gone(link.id))
            self.idle(table)

    def flush_soon(self, link: Outlet) -> None:
        """Write ``link``'s frames at the end of this loop turn, with every other link's:
        one write per connection per turn, however many messages it got."""
        self._dirty.append(link)
        self._plan_flush()

    def flush_later(self, link: Outlet) -> None:
        """Write the frames of a spectator's ``link`` after every link of :meth:`flush_soon`,
        :data:`WATCHER_BATCH` spectators a loop turn: a fan-out to thousands never holds up
        the players' own messages, coming or going, for long."""
        self._later.append(link)
        self._plan_flush()

    def flush_now(self) -> None:
        """Write the players' links' frames now. The writer calls it after each commit's
        report, so that what those outcomes told goes out at once: a flush planned from there
        would wait for the loop's next turn, behind every socket read in it — 26 ms on
        average for the slow rounds of a burst of games' ends (docs/BENCHMARKS.md, *Where a
        burst's slow rounds wait*). Spectators' links keep their own pace."""
        dirty, self._dirty = self._dirty, []
        self.flushes += len(dirty)
        _write(dirty)

    def _told(self) -> None:
        """A commit's outcomes were told: what they said goes out now."""
        self.commits += 1
        self.flush_now()

    def _plan_flush(self) -> None:
        if not self._flushing:
            self._flushing = True
            (self._loop or asyncio.get_running_loop()).call_soon(self._flush)

    def _flush(self) -> None:
        self._flushing = False
        self.flush_now()
        later = self._later
        watchers = [later.popleft() for _ in range(min(WATCHER_BATCH, len(later)))]
        self.flushes += len(watchers)
        _write(watchers)
        if self._dirty or later:
            self._plan_flush()

    # -- life ------------------------------------------------------------------------------

    def start(self, fenced: Callable[[set[str]], None], apart: bool = False) -> None:
        """Store through a group-commit writer thread reporting to the running loop, or with
        ``apart`` through one in a process of its own (:mod:`flyswat.server.writer_process`);
        ``fenced(codes)``: the store refused those tables' events (another node owns them)."""
        observe = self.metrics.commit.observe if self.metrics is not None else None
        kind = WriterProcess if apart else Writer
        self._loop = asyncio.get_running_loop()
        self.writer = kind(self.store, self._loop, fenced=fenced, observe=observe,
                           told=self._told)  # fmt: skip

    def stop_timers(self) -> None:
        """Forget every table's wake-up, and stop the loop's timer."""
        if self._timer is not None:
            self._timer.cancel()
        self._timer = self._timer_at = None
        self._heap.clear()
        self._wakes.clear()

    def close(self) -> None:
        """Stop every timer, write what is queued, and release the store."""
        self.stop_timers()
        if self.writer is not None:
            self.writer.stop()
        self.store.close()
