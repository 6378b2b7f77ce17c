"""The asyncio runner: carries out what the sans-I/O tables ask, on one event loop.

:class:`Runner` owns a process's tables (:class:`flyswat.table.core.Table`), their single
wake-up timers, the links of their connections and the store. :meth:`Runner.run` hands a
command to a table with the clock's ``now`` and carries out the outcome in one rule: **store,
then tell** — the outcome's events are committed before any of its messages is queued. The
tables never await, so each command is atomic on the loop.

Memory holds the tables in the lobby or in play, and finished ones while somebody is still
connected to them; a finished table nobody watches is dropped (:meth:`forget`) and rebuilt
from the store on demand (:meth:`find`).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import itertools
import logging
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson
from pydantic import ValidationError

from flyswat import protocol as p
from flyswat.errors import FlyswatError, IllegalActionError
from flyswat.server.cluster import Cluster, Owner
from flyswat.server.connection import WATCHER_PING_EVERY_S, Link, Pinger
from flyswat.server.frames import text_frame
from flyswat.server.limits import Limits
from flyswat.server.settings import MAX_SPECTATORS
from flyswat.server.store import Store
from flyswat.server.writer import Writer
from flyswat.table.core import Table
from flyswat.table.events import Closed
from flyswat.table.io import Command, Fanout, Gone, Outcome, Rtt, Sources, Tick
from flyswat.table.seats import Audience, new_code

log = logging.getLogger("flyswat.server")

#: Links written in one go from the spectators' queue (:meth:`Runner.flush_later`): a featured
#: game's thousands of writes are spread over loop turns, so that the players' messages that
#: come meanwhile are read between them.
WATCHER_BATCH = 500


@dataclass(slots=True)
class _Untold:
    """An outcome of a table waiting to be told: its events are ``storing``, or an earlier
    outcome's are; ``told`` (a future) is resolved when it has been."""

    outcome: Outcome | None
    storing: bool
    told: asyncio.Future[None] | None = None
    at: float = 0.0  # perf_counter when the command was carried out


def monotonic_ms() -> float:
    """The clock the tables run on, in ms: the same one as the asyncio loop's timers."""
    return time.monotonic() * 1000.0


class Runner:
    """The tables of one server process, the store they live in, and their connections."""

    def __init__(
        self,
        store: Store,
        *,
        bot_pace: float = 1.0,
        clock: Callable[[], float] = monotonic_ms,
        sources: Callable[[], Sources] = Sources,
        limits: Limits | None = None,
        cluster: Cluster | None = None,
        max_spectators: int = MAX_SPECTATORS,
    ) -> None:
        """``max_spectators``: the spectators this node takes, over all its tables."""
        self.store = store
        #: This node among the others serving the store (none: the store is this process's
        #: alone, as in tests of the runner itself).
        self.cluster = cluster
        self.limits = limits or Limits()
        self.bot_pace = bot_pace
        self.clock = clock
        self.sources = sources
        self.tables: dict[str, Table] = {}
        #: The spectators of every table here, against the node's cap.
        self.audience = Audience(max_spectators)
        self.links: dict[int, Link] = {}
        self._dirty: list[Link] = []  # links with frames to write at the end of the turn
        self._later: deque[Link] = deque()  # spectators' links, written after them
        self._flushing = False  # a flush is planned
        self.pinger = Pinger()
        self.watch_pinger = Pinger(WATCHER_PING_EVERY_S)
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._wakes: dict[str, float] = {}  # the table time each timer is set for
        #: Per table, its outcomes not told yet, oldest first (:meth:`carry_out`).
        self._untold: dict[str, deque[_Untold]] = {}
        #: The group-commit writer (:meth:`start`); without one, each outcome is stored on
        #: the spot, synchronously.
        self.writer: Writer | None = None
        self._ids = itertools.count(1)
        #: Wall-clock time each table in memory came to this node (the lobby's order).
        self.born: dict[str, float] = {}
        self._published: dict[str, bytes | None] = {}  # the lobby entries last published
        #: A live game's entry as last made, by its :meth:`~flyswat.table.core.Table.
        #: listing_key`: made again only when the key changes.
        self._entries: dict[str, tuple[tuple[Any, ...], dict[str, Any]]] = {}
        self._orphaned: dict[str, float] = {}  # when each unowned table was first seen
        #: Tables handed over (shut down) or lost (fenced): commands are not taken.
        self.draining = False
        self.received = 0  # WebSocket messages, for the metrics
        self.sent = 0
        self.metrics: Any = None  # flyswat.server.metrics.Metrics, when served

    # -- the one rule ----------------------------------------------------------------------

    def run(self, table: Table, command: Command) -> Outcome:
        """Hand ``command`` to ``table`` now and carry out the outcome; a refused HTTP
        command raises :class:`FlyswatError` having changed nothing."""
        if self.draining:
            raise IllegalActionError("this table is moving to another node: try again", "moved")
        outcome = table.handle(command, self.clock())
        self.carry_out(table, outcome)
        return outcome

    def observe(self, table: Table, rtt: Rtt) -> None:
        """A round trip measured on a connection of ``table``: it changes what the arbiter
        allows, nothing to store, tell or wake for."""
        if not self.draining:
            table.observe(rtt, self.clock())

    async def act(self, table: Table, command: Command) -> Outcome:
        """:meth:`run`, returning once the outcome's events are stored (an HTTP reply)."""
        outcome = self.run(table, command)
        await self.stored(table)
        return outcome

    async def stored(self, table: Table) -> None:
        """Return once everything ``table`` did so far is stored and told."""
        untold = self._untold.get(table.code)
        if untold:
            waiter = _Untold(None, storing=False, told=asyncio.get_running_loop().create_future())
            untold.append(waiter)
            await waiter.told  # type: ignore[misc]

    def carry_out(self, table: Table, outcome: Outcome) -> None:
        """Store the events, then (once they are committed) deliver the messages and closes;
        set the table's timer at once. A table's outcomes are told in the order they came,
        so one that stores nothing waits behind the ones still being stored."""
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
        self._schedule(table)

    def _committed(self, table: Table, entry: _Untold) -> None:
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
            self.forget(table)

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

    def _schedule(self, table: Table) -> None:
        wake = table.wake_at
        if wake is not None and self._wakes.get(table.code) == wake:
            return  # the timer already set is the one (most commands change no deadline)
        timer = self._timers.pop(table.code, None)
        self._wakes.pop(table.code, None)
        if timer is not None:
            timer.cancel()
        if wake is None:
            return
        delay = max(0.0, (wake - self.clock()) / 1000) + 0.0005
        loop = asyncio.get_running_loop()
        self._timers[table.code] = loop.call_later(delay, self._tick, table.code)
        self._wakes[table.code] = wake

    def _tick(self, code: str) -> None:
        self._timers.pop(code, None)
        self._wakes.pop(code, None)
        table = self.tables.get(code)
        if table is None:
            return
        try:
            self.run(table, Tick())
        except Exception:  # a table's bug must not stop the loop's other tables
            log.exception("table %s failed on its timer", code)
        self.forget(table)

    # -- tables ----------------------------------------------------------------------------

    def _load(self, code: str) -> Table | None:
        try:
            events = self.store.load(code)
        except ValidationError:
            log.exception("table %s has a stored event that is not one", code)
            return None
        if not events:
            return None
        try:
            table, outcome = Table.restore(code, events, self.sources(), self.clock(),
                                           **self._table_settings())  # fmt: skip
        except FlyswatError:
            log.exception("table %s cannot be restored", code)
            return None
        if table.state == "over" and table.record is None:
            table.record = self.store.record(code)
        self.tables[code] = table
        self.born.setdefault(code, time.time())
        self.carry_out(table, outcome)
        return table

    def _table_settings(self) -> dict[str, Any]:
        limits = self.limits
        return {"bot_pace": self.bot_pace, "audience": self.audience,
                "lobby_ttl_ms": limits.lobby_ttl_s * 1000,
                "seat_ttl_ms": limits.seat_ttl_s * 1000}  # fmt: skip

    def restore(self) -> None:
        """Rebuild every stored table in the lobby or in play that this node may run (its
        own from before a restart, and those nobody live owns) and resume it."""
        if self.cluster is None:
            for code, state in self.store.codes():
                if state in ("lobby", "playing"):
                    self._load(code)
            return
        peers = self.cluster.beat()
        mine = self.cluster.mine()
        for code, state in self.store.codes():
            if state in ("lobby", "playing") and code in mine:
                self._load(code)
        self.adopt_orphans(peers, everyone=True)

    def adopt_orphans(self, peers: dict[str, str], everyone: bool = False) -> list[str]:
        """Adopt tables whose owner is gone: this node's share of them (spread by code over
        the live nodes), or any left unadopted for a while, or all (``everyone``).
        Synchronous: call it on a thread, or at start-up. Returns the codes adopted; the
        tables are rebuilt on the loop."""
        assert self.cluster is not None
        live = sorted(peers)
        rank = live.index(self.cluster.node) if self.cluster.node in live else 0
        now = time.time()
        patience = 2 * self.cluster.timings.dead_after_s  # then anyone takes it
        taken = []
        seen = set()
        for code, owner in self.cluster.orphans(live):
            seen.add(code)
            first = self._orphaned.setdefault(code, now)
            share = _spread(code, len(live)) == rank
            if (everyone or share or now - first > patience) and self.cluster.adopt(
                code, dead=[owner] if owner is not None else []
            ):
                taken.append(code)
        for code in list(self._orphaned):
            if code not in seen or code in taken:
                del self._orphaned[code]
        if everyone:
            for code in taken:
                if code not in self.tables:
                    self._load(code)
        return taken

    def find(self, code: str) -> Table | None:
        """The table with this code, rebuilt from the store if it is not in memory (a
        runner without a cluster: see :meth:`locate`)."""
        return self.tables.get(code) or self._load(code)

    async def locate(self, code: str) -> Table | Owner | None:
        """Table ``code`` if this node runs it — adopting it if nobody live does, and
        rebuilding it from the store —, else its live owner; None if there is no such table."""
        table = self.tables.get(code)
        if self.cluster is None:
            return table or self._load(code)
        cluster = self.cluster
        if table is not None and not cluster.stale():
            return table
        if table is not None:  # this node was paused past its lease: is the table still its?
            if await asyncio.to_thread(cluster.mine_still, code):
                return table
            self.lost({code})
        owner = await asyncio.to_thread(cluster.owner, code)
        if owner.alive and owner.node != cluster.node:
            return owner
        if self.draining or not await asyncio.to_thread(self.store.exists, code):
            return None
        if await asyncio.to_thread(cluster.adopt, code):
            return self.tables.get(code) or self._load(code)
        owner = await asyncio.to_thread(cluster.owner, code)  # another node was faster
        return owner if owner.alive else None

    async def table(self, code: str) -> Table | Owner:
        """:meth:`locate`; raises ``not_found``."""
        found = await self.locate(code)
        if found is None:
            raise IllegalActionError(f"no table {code!r}", "not_found")
        return found

    async def create(
        self, body: p.CreateTable, player: str | None = None, rating: int | None = None,
        key: str | None = None, bot: bool = False,
    ) -> tuple[Table, int, str]:  # fmt: skip
        """A new table with its host seated, once stored: ``(table, seat, token)``;
        ``player``: the host's id (checked by the caller), ``rating`` their shown rating;
        ``key``: what the host's token is derived from (their secret; :class:`Join`);
        ``bot``: the host is a bot account."""
        options = p.TableOptions(**body.model_dump(exclude={"name", "player", "secret"}))
        code = new_code()
        while code in self.tables or self.store.exists(code):
            code = new_code()
        table, outcome = Table.create(code, options, body.name, self.sources(), self.clock(),
                                      player=player, rating=rating, key=key, bot=bot,
                                      **self._table_settings())  # fmt: skip
        self.tables[code] = table
        self.born[code] = time.time()
        self.carry_out(table, outcome)
        await self.stored(table)
        seat, token = outcome.reply
        return table, seat, token

    def forget(self, table: Table) -> None:
        """Drop ``table`` from memory if it is finished (over or expired) and nobody is
        connected to it."""
        quiet = not table.conns and not table.strangers and table.code not in self._untold
        if table.state in ("over", "expired") and quiet:
            timer = self._timers.pop(table.code, None)
            self._wakes.pop(table.code, None)
            if timer is not None:
                timer.cancel()
            self.tables.pop(table.code, None)
            self.born.pop(table.code, None)

    def sweep(self) -> None:
        """Forget every finished table that nobody watches."""
        for table in list(self.tables.values()):
            self.forget(table)

    # -- connections -----------------------------------------------------------------------

    def link(self, table: Table, make: Callable[[int, Callable[[int], None]], Link]) -> Link:
        """A new connection to ``table``: ``make(id, on_sent)`` builds its link."""
        conn = next(self._ids)

        def on_sent(turn: int) -> None:
            if conn in self.links and not self.draining:
                table.delivered(conn, turn, self.clock())  # nothing to store or tell
                self._schedule(table)  # the round's deadline may move

        link = make(conn, on_sent)
        self.links[conn] = link
        return link

    def flush_soon(self, link: Link) -> None:
        """Write ``link``'s frames at the end of this loop turn, with every other link's:
        one write per connection per turn, however many messages it got."""
        self._dirty.append(link)
        self._plan_flush()

    def flush_later(self, link: Link) -> None:
        """Write the frames of a spectator's ``link`` after every link of :meth:`flush_soon`,
        :data:`WATCHER_BATCH` spectators a loop turn: a fan-out to thousands never holds up
        the players' own messages, coming or going, for long."""
        self._later.append(link)
        self._plan_flush()

    def _plan_flush(self) -> None:
        if not self._flushing:
            self._flushing = True
            asyncio.get_running_loop().call_soon(self._flush)

    def _flush(self) -> None:
        self._flushing = False
        dirty, self._dirty = self._dirty, []
        later = self._later
        batch = [later.popleft() for _ in range(min(WATCHER_BATCH, len(later)))]
        for link in (*dirty, *batch):
            try:
                link.flush()
            except Exception:  # one socket's failure must not keep the others' frames
                log.exception("writing to connection %d failed", link.id)
        if self._dirty or later:
            self._plan_flush()

    def unlink(self, table: Table, link: Link) -> None:
        """``link`` closed: tell its table, forget the link."""
        self.links.pop(link.id, None)
        if table.code in self.tables and not self.draining:
            self.run(table, Gone(link.id))
            self.forget(table)

    def start(self) -> None:
        """Store through a group-commit writer thread reporting to the running loop."""
        observe = self.metrics.commit.observe if self.metrics is not None else None
        self.writer = Writer(
            self.store, asyncio.get_running_loop(), fenced=self.lost, observe=observe
        )

    # -- the cluster -----------------------------------------------------------------------

    def lost(self, codes: set[str]) -> None:
        """Another node owns these tables now (the store refused their events): drop them
        without telling anything not stored, and send their players to look again."""
        for code in codes:
            table = self.tables.pop(code, None)
            self.born.pop(code, None)
            self._published.pop(code, None)  # its entry is the new owner's to change now
            self._entries.pop(code, None)
            for entry in self._untold.pop(code, ()):  # an HTTP command waiting: try again
                if entry.told is not None and not entry.told.done():
                    gone = IllegalActionError("the table moved to another node: try again", "moved")
                    entry.told.set_exception(gone)
            timer = self._timers.pop(code, None)
            self._wakes.pop(code, None)
            if timer is not None:
                timer.cancel()
            if table is None:
                continue
            table.let_go()
            log.warning("table %s is owned by another node now: dropped here", code)
            for conn in list(table.conns) + list(table.strangers):
                link = self.links.get(conn)
                if link is not None:
                    link.moved(None)

    def settled(self) -> set[str]:
        """The tables in memory with nothing waiting to be stored (their creation included)."""
        return {code for code in self.tables if code not in self._untold}

    def lobby_changes(self) -> dict[str, dict[str, Any] | None]:
        """The entries of this node's tables in the shared list that changed since they were
        last published (:meth:`published`): the info of a listed table (the lobby's) or of a
        live one (Live now's: its ``state`` tells them apart), or None for one no longer
        listed. ``fill_at`` (wall-clock s) stands for the bots' countdown."""
        now, wall = self.clock(), time.time()
        changes: dict[str, dict[str, Any] | None] = {}
        for code, table in self.tables.items():
            if table.listed():  # a lobby's entry has a countdown in it: made every time
                info = self._entry(table, now, wall)
            elif table.live():
                key, made = table.listing_key(), self._entries.get(code)
                if made is None or made[0] != key:
                    made = self._entries[code] = (key, self._entry(table, now, wall))
                info = made[1]
            else:
                self._entries.pop(code, None)
                if self._published.get(code) is not None:
                    changes[code] = None
                continue
            if self._published.get(code) != orjson.dumps(info):
                changes[code] = info
        for code, was in self._published.items():
            if code not in self.tables and was is not None:
                changes[code] = None
        for code in [c for c in self._entries if c not in self.tables]:
            del self._entries[code]  # the table left this node
        return changes

    @staticmethod
    def _entry(table: Table, now: float, wall: float) -> dict[str, Any]:
        """``table``'s entry in the shared list: its info, ``fill_at`` for the countdown."""
        info = table.info(now).model_dump()
        fill = info.pop("fill_in_ms", None)
        info["fill_at"] = None if fill is None else round(wall + fill / 1000, 1)
        return info

    def published(self, changes: dict[str, dict[str, Any] | None]) -> None:
        """``changes`` (:meth:`lobby_changes`) are published."""
        for code, info in changes.items():
            if info is None:
                self._published.pop(code, None)
            else:
                self._published[code] = orjson.dumps(info)

    async def hand_over(self) -> None:
        """Stop taking commands, store what is pending, give every table up for another
        node to adopt, and send every client there (a graceful shutdown)."""
        self.draining = True
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
        self._wakes.clear()
        for table in list(self.tables.values()):
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.stored(table), 5)
        if self.cluster is not None:
            await asyncio.to_thread(self.cluster.leave)
        for link in list(self.links.values()):
            link.moved(None)

    def close(self) -> None:
        """Stop every timer, write what is queued, and release the store."""
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
        self._wakes.clear()
        if self.writer is not None:
            self.writer.stop()
        self.store.close()


def _spread(code: str, nodes: int) -> int:
    """Which of ``nodes`` live nodes (in the order of their ids) adopts an orphan table."""
    return int.from_bytes(hashlib.blake2b(code.encode(), digest_size=4).digest(), "big") % max(
        1, nodes
    )
