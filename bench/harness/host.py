"""What the rhythm's tables and players use of the generator that runs them.

:mod:`harness.rhythm` (the tables and players) and :mod:`harness.generator` (the process
that runs them) each need the other; this :class:`Host` protocol, which the generator
satisfies, is the rhythm's side of it, so that neither imports the other back.
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from collections.abc import Coroutine
from typing import Any, Protocol

from harness.libclient import LibSocket
from harness.wire import WireSocket


class Host(Protocol):
    """The generator, as its tables and players see it (:class:`harness.generator.Generator`)."""

    plan: Any  # harness.rhythm.RhythmPlan
    loop: asyncio.AbstractEventLoop
    rng: random.Random
    sent: int
    received: int
    count: Counter[str]
    kinds: Counter[bytes]  # messages received by their type's first three letters
    errors: Counter[str]
    rounds: list[tuple[float, float]]
    last_actions: list[float]
    games_over_at: list[float]
    timeouts: list[float]

    def spawn(self, coro: Any) -> asyncio.Task[Any]:
        """Run ``coro`` as a task the generator keeps."""

    async def seat_request(self, path: str, body: dict[str, Any]) -> dict[str, Any] | None:
        """A create or a join; the ``Seated`` reply, or None when it failed."""

    async def owner_port(self, code: str) -> int:
        """The port of the node that runs table ``code``."""

    async def connect(self, player: Any) -> WireSocket | LibSocket:
        """Open ``player``'s socket."""

    def open_table(self) -> Coroutine[Any, Any, Any]:
        """Open a table and seat its clients."""
