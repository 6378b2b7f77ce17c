"""The directory of one node's tables: made, loaded, found, forgotten.

Memory holds the tables in the lobby or in play, and finished ones while somebody is still
connected to them; a finished table nobody watches is dropped (:meth:`Directory.forget`) and
rebuilt from the store on demand (:meth:`Directory.find`). A table made or rebuilt here hands
its first outcome to the :class:`~flyswat.server.executor.Executor`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

from flyswat import protocol as p
from flyswat.errors import FlyswatError
from flyswat.record import record_json
from flyswat.server.executor import Executor
from flyswat.server.limits import Limits
from flyswat.server.store import Store
from flyswat.table.core import Table
from flyswat.table.events import Event, NotAnEvent
from flyswat.table.io import Sources
from flyswat.table.seats import Audience, new_code

log = logging.getLogger("flyswat.server")


class Directory:
    """The tables in this node's memory, by code, and when each came here."""

    def __init__(
        self, store: Store, executor: Executor, tables: dict[str, Table], *,
        bot_pace: float, sources: Callable[[], Sources], limits: Limits, audience: Audience,
    ) -> None:  # fmt: skip
        """``tables``: the node's tables by code (the executor reads the same mapping);
        ``audience``: the spectators of every table here, against the node's cap."""
        self.store = store
        self.executor = executor
        self.tables = tables
        self.bot_pace = bot_pace
        self.sources = sources
        self.limits = limits
        self.audience = audience
        #: Wall-clock time each table in memory came to this node (the lobby's order).
        self.born: dict[str, float] = {}

    async def find(self, code: str) -> Table | None:
        """The table with this code, rebuilt from the store if it is not in memory (read on
        a worker thread: no SQL on the loop)."""
        table = self.tables.get(code)
        if table is None:
            stored = await asyncio.to_thread(self._read, code)
            # Another request may have rebuilt it meanwhile: that one is the table.
            table = self.tables.get(code) or self._rebuild(code, *stored)
        return table

    def load(self, code: str) -> Table | None:
        """:meth:`find`, synchronously (the node's start, before it serves)."""
        return self.tables.get(code) or self._rebuild(code, *self._read(code))

    def _read(self, code: str) -> tuple[list[Event] | None, dict[str, Any] | None]:
        """Table ``code``'s stored events (None: one is not an event, which is logged) and
        the record of its game, if it is over."""
        try:
            events = self.store.load(code)
        except NotAnEvent:
            log.exception("table %s has a stored event that is not one", code)
            return None, None
        return events, self.store.record(code) if events else None

    def _rebuild(
        self, code: str, events: list[Event] | None, record: dict[str, Any] | None
    ) -> Table | None:
        """Table ``code`` rebuilt from its stored ``events`` and resumed (None: no events,
        or they cannot be rebuilt, which is logged)."""
        if not events:
            return None
        now = self.executor.clock()
        try:
            table, outcome = Table.restore(code, events, self.sources(), now,
                                           **self._settings())  # fmt: skip
        except FlyswatError:
            log.exception("table %s cannot be restored", code)
            return None
        # Not an earlier game's record (a rematch's table): the one of its last game.
        if table.state == "over" and record is not None and record.get("id") == table.game_id:
            table.record = table.record or record_json(record)
        self.tables[code] = table
        self.born.setdefault(code, time.time())
        self.executor.carry_out(table, outcome)
        return table

    def _settings(self) -> dict[str, Any]:
        limits = self.limits
        return {"bot_pace": self.bot_pace, "audience": self.audience,
                "lobby_ttl_ms": limits.lobby_ttl_s * 1000,
                "seat_ttl_ms": limits.seat_ttl_s * 1000}  # fmt: skip

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
        while code in self.tables or await asyncio.to_thread(self.store.exists, code):
            code = new_code()
        table, outcome = Table.create(code, options, body.name, self.sources(),
                                      self.executor.clock(), player=player, rating=rating,
                                      key=key, bot=bot, **self._settings())  # fmt: skip
        self.tables[code] = table
        self.born[code] = time.time()
        self.executor.carry_out(table, outcome)
        await self.executor.stored(table)
        seat, token = outcome.reply
        return table, seat, token

    def forget(self, table: Table) -> None:
        """Drop ``table`` from memory if it is finished (over or expired) and nobody is
        connected to it."""
        code = table.code
        quiet = not table.conns and not table.strangers and not self.executor.pending(code)
        if table.state in ("over", "expired") and quiet:
            self.executor.cancel(code)
            self.tables.pop(code, None)
            self.born.pop(code, None)

    def drop(self, code: str) -> Table | None:
        """Take table ``code`` out of memory whatever its state (another node owns it now),
        its timer and untold outcomes with it; the table, if it was here."""
        self.executor.drop(code)
        self.born.pop(code, None)
        return self.tables.pop(code, None)

    def sweep(self) -> None:
        """Forget every finished table that nobody watches."""
        for table in list(self.tables.values()):
            self.forget(table)
