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
import itertools
import logging
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from flyswat import protocol as p
from flyswat.errors import FlyswatError, IllegalActionError
from flyswat.server.connection import Link, text_frame
from flyswat.server.limits import Limits
from flyswat.server.store import Store
from flyswat.server.writer import Writer
from flyswat.table.core import Table
from flyswat.table.io import Command, Gone, Outcome, Sent, Sources, Tick
from flyswat.table.seats import new_code

log = logging.getLogger("flyswat.server")


@dataclass(slots=True)
class _Untold:
    """An outcome of a table waiting to be told: its events are ``storing``, or an earlier
    outcome's are; ``told`` (a future) is resolved when it has been."""

    outcome: Outcome | None
    storing: bool
    told: asyncio.Future[None] | None = None


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
    ) -> None:
        self.store = store
        self.limits = limits or Limits()
        self.bot_pace = bot_pace
        self.clock = clock
        self.sources = sources
        self.tables: dict[str, Table] = {}
        self.links: dict[int, Link] = {}
        self._dirty: list[Link] = []  # links with frames to write at the end of the turn
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._wakes: dict[str, float] = {}  # the table time each timer is set for
        #: Per table, its outcomes not told yet, oldest first (:meth:`carry_out`).
        self._untold: dict[str, deque[_Untold]] = {}
        #: The group-commit writer (:meth:`start`); without one, each outcome is stored on
        #: the spot, synchronously.
        self.writer: Writer | None = None
        self._ids = itertools.count(1)

    # -- the one rule ----------------------------------------------------------------------

    def run(self, table: Table, command: Command) -> Outcome:
        """Hand ``command`` to ``table`` now and carry out the outcome; a refused HTTP
        command raises :class:`FlyswatError` having changed nothing."""
        outcome = table.handle(command, self.clock())
        self.carry_out(table, outcome)
        return outcome

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
            entry = _Untold(outcome, storing=True)
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
            if first.told is not None and not first.told.done():
                first.told.set_result(None)
        if not untold:
            self._untold.pop(table.code, None)
            self.forget(table)

    def tell(self, outcome: Outcome) -> None:
        """Queue an outcome's messages and closes on their connections."""
        frames: dict[int, bytes] = {}  # a broadcast's message is framed once for all
        for send in outcome.sends:
            link = self.links.get(send.conn)
            if link is not None:
                key = id(send.message)
                frame = frames.get(key)
                if frame is None:
                    message = send.message
                    data = message if isinstance(message, bytes) else message.model_dump_json()
                    frame = frames[key] = text_frame(
                        data if isinstance(data, bytes) else data.encode()
                    )
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
        self.carry_out(table, outcome)
        return table

    def _table_settings(self) -> dict[str, Any]:
        limits = self.limits
        return {"bot_pace": self.bot_pace, "max_spectators": limits.max_spectators,
                "lobby_ttl_ms": limits.lobby_ttl_s * 1000,
                "seat_ttl_ms": limits.seat_ttl_s * 1000}  # fmt: skip

    def restore(self) -> None:
        """Rebuild every stored table in the lobby or in play and resume it."""
        for code, state in self.store.codes():
            if state in ("lobby", "playing"):
                self._load(code)

    def find(self, code: str) -> Table | None:
        """The table with this code, rebuilt from the store if it is not in memory."""
        return self.tables.get(code) or self._load(code)

    def table(self, code: str) -> Table:
        """The table with this code; raises ``not_found``."""
        table = self.find(code)
        if table is None:
            raise IllegalActionError(f"no table {code!r}", "not_found")
        return table

    async def create(
        self, body: p.CreateTable, player: str | None = None, rating: int | None = None,
        key: str | None = None,
    ) -> tuple[Table, int, str]:  # fmt: skip
        """A new table with its host seated, once stored: ``(table, seat, token)``;
        ``player``: the host's id (checked by the caller), ``rating`` their shown rating;
        ``key``: what the host's token is derived from (their secret; :class:`Join`)."""
        options = p.TableOptions(**body.model_dump(exclude={"name", "player", "secret"}))
        code = new_code()
        while code in self.tables or self.store.exists(code):
            code = new_code()
        table, outcome = Table.create(code, options, body.name, self.sources(), self.clock(),
                                      player=player, rating=rating, key=key,
                                      **self._table_settings())  # fmt: skip
        self.tables[code] = table
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

    def sweep(self) -> None:
        """Forget every finished table that nobody watches."""
        for table in list(self.tables.values()):
            self.forget(table)

    # -- connections -----------------------------------------------------------------------

    def link(self, table: Table, make: Callable[[int, Callable[[int], None]], Link]) -> Link:
        """A new connection to ``table``: ``make(id, on_sent)`` builds its link."""
        conn = next(self._ids)

        def on_sent(turn: int) -> None:
            if conn in self.links:
                self.run(table, Sent(conn, turn))

        link = make(conn, on_sent)
        self.links[conn] = link
        return link

    def flush_soon(self, link: Link) -> None:
        """Write ``link``'s frames at the end of this loop turn, with every other link's:
        one write per connection per turn, however many messages it got."""
        self._dirty.append(link)
        if len(self._dirty) == 1:
            asyncio.get_running_loop().call_soon(self._flush)

    def _flush(self) -> None:
        dirty, self._dirty = self._dirty, []
        for link in dirty:
            try:
                link.flush()
            except Exception:  # one socket's failure must not keep the others' frames
                log.exception("writing to connection %d failed", link.id)

    def unlink(self, table: Table, link: Link) -> None:
        """``link`` closed: tell its table, forget the link."""
        self.links.pop(link.id, None)
        self.run(table, Gone(link.id))
        self.forget(table)

    def start(self) -> None:
        """Store through a group-commit writer thread reporting to the running loop."""
        self.writer = Writer(self.store, asyncio.get_running_loop())

    def close(self) -> None:
        """Stop every timer, write what is queued, and release the store."""
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
        self._wakes.clear()
        if self.writer is not None:
            self.writer.stop()
        self.store.close()
