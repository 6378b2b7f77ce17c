"""Short reads asked one at a time on the event loop, made on a thread together.

A table's set-up asks the store a question or two (is a guest's name a player's? whose is
this identity?): SQL the event loop never runs itself. A trip to a thread apiece cost a node,
in a burst of new tables, over a third of the set-up's CPU — the thread and the event loop
handing the interpreter to one another at every statement (``docs/BENCHMARKS.md``, *A trip
to a thread for every set-up*). :class:`Batched` asks them together: what is asked
while one batch is read waits for the next, which reads it all in one trip, as the store's
writer commits what came meanwhile (:mod:`flyswat.server.writer`). A question asked on a calm
node goes at once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Generic, TypeVar

from sqlalchemy.engine import Connection

K = TypeVar("K")
V = TypeVar("V")

#: Questions a batch at most (a statement's parameters are bounded: SQLite's 32,766).
MOST = 500


class Batched(Generic[K, V]):
    """``read(conn, keys)`` — a value, or the exception to raise, for each key, in order —
    run by ``db`` (on its threads) for every key asked while the last batch was read."""

    def __init__(
        self,
        db: Callable[[Callable[[Connection], Any]], Awaitable[Any]],
        read: Callable[[Connection, list[K]], Sequence[V | Exception]],
        most: int = MOST,
    ) -> None:
        self.db = db
        self.read = read
        self.most = most
        self.asked: list[tuple[K, asyncio.Future[V]]] = []
        self.task: asyncio.Task[None] | None = None
        self.batches = 0

    async def ask(self, key: K) -> V:
        """``key``'s value, read in the next batch; raises what the read gave for it."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future[V] = loop.create_future()
        self.asked.append((key, done))
        if self.task is None or self.task.done():  # (done: its loop ended in a batch)
            self.task = loop.create_task(self._run())
        return await done

    async def _run(self) -> None:
        try:
            while self.asked:
                batch, self.asked = self.asked[: self.most], self.asked[self.most :]
                keys = [key for key, _ in batch]
                self.batches += 1
                try:
                    values = await self._read(keys)
                except Exception as e:  # the read itself failed: each one's error
                    values = [e] * len(batch)
                for (_, done), value in zip(batch, values, strict=True):
                    if done.done():  # its request was given up
                        continue
                    if isinstance(value, Exception):
                        done.set_exception(value)
                    else:
                        done.set_result(value)
        finally:
            self.task = None

    async def _read(self, keys: list[K]) -> Sequence[V | Exception]:
        values: Sequence[V | Exception] = await self.db(lambda conn: self.read(conn, keys))
        return values
