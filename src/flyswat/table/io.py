"""What goes into a table and what comes out of it: commands in, effects out.

A runner (:mod:`flyswat.server.runner`, or a test) hands each :class:`Command` to
:meth:`flyswat.table.core.Table.handle` with the time ``now`` (ms on a monotonic clock) and
carries out the :class:`Outcome`: first it stores ``events`` (nothing is told that is not
stored), then it delivers ``sends`` and ``closes``, and it wakes the table with :class:`Tick`
at :attr:`~flyswat.table.core.Table.wake_at`. Connections are plain ids chosen by the runner.
"""

from __future__ import annotations

import random
import secrets
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TypeAlias

from pydantic import BaseModel

from flyswat.errors import FlyswatError
from flyswat.protocol import ClientMessage
from flyswat.table.events import Event

# -- commands -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Message:
    """Connection ``conn`` sent ``message`` (a parsed client message, :mod:`flyswat.protocol`),
    or something refused before it could be one: ``refused`` is then the error's
    ``(code, message)`` — plain data, never the exception, whose traceback would keep the
    refused frame's text alive."""

    conn: int
    message: ClientMessage | None = None
    refused: tuple[str, str] | None = None

    @classmethod
    def refusing(cls, conn: int, error: FlyswatError) -> Message:
        """The command for a frame refused with ``error``."""
        return cls(conn, refused=(error.code, error.message))


@dataclass(frozen=True, slots=True)
class Gone:
    """Connection ``conn`` closed."""

    conn: int


@dataclass(frozen=True, slots=True)
class Rtt:
    """A round-trip time measured on connection ``conn``: ``ms`` from a ``ping``'s send to
    its ``pong``, or ``network_ms`` as the network itself measured it (the socket's own
    ``TCP_INFO``, or a trusted front's); either may be None."""

    conn: int
    ms: float | None = None
    network_ms: float | None = None


@dataclass(frozen=True, slots=True)
class Sent:
    """The reveal of ``turn`` was handed to connection ``conn``'s socket at ``now``."""

    conn: int
    turn: int


@dataclass(frozen=True, slots=True)
class Join:
    """Someone takes the next free human seat under ``name`` (HTTP); ``player`` is their
    id when they came with an identity (checked by the server), ``rating`` their shown
    rating. ``key``, when given, makes the join idempotent: the seat's token is derived
    from it (:func:`~flyswat.table.seats.seat_token`), and a join that already holds a
    seat — the same ``player``, or without one the seat that key's token opens — gets that
    seat and token back. The server passes the player's secret, or an anonymous join's
    request key. ``bot``: the player is a bot account (checked by the server), which sits
    only at a table that takes bot accounts or invited it."""

    name: str
    player: str | None = None
    rating: int | None = None
    key: str | None = None
    bot: bool = False


@dataclass(frozen=True, slots=True)
class StartBy:
    """The holder of ``token`` starts the game (HTTP)."""

    token: str


@dataclass(frozen=True, slots=True)
class Tick:
    """Time passed: the table's wake-up time came."""


Command: TypeAlias = Message | Gone | Rtt | Sent | Join | StartBy | Tick

# -- effects --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Send:
    """Deliver ``message`` to connection ``conn`` (a model, or a message already encoded as
    JSON bytes: :mod:`flyswat.wire`); ``mark``: report its hand-over to the socket with
    :class:`Sent` (reveals that open a round: the arbiter times from then)."""

    conn: int
    message: BaseModel | bytes
    mark: int | None = None


@dataclass(frozen=True, slots=True)
class Fanout:
    """Deliver one ``message`` to every connection of ``conns`` (a table's spectators, as
    they were when it was sent): encoded and framed once, the same bytes written to each."""

    conns: tuple[int, ...]
    message: BaseModel | bytes


@dataclass(frozen=True, slots=True)
class Close:
    """Close connection ``conn`` with WebSocket close ``code`` after what was sent to it."""

    conn: int
    code: int
    reason: str = ""


@dataclass(slots=True)
class Outcome:
    """What one command did: events to store first, then messages (to one connection, or
    one message fanned out to many) and closes to deliver; ``reply`` answers an HTTP
    command."""

    events: list[Event] = field(default_factory=list)
    sends: list[Send | Fanout] = field(default_factory=list)
    closes: list[Close] = field(default_factory=list)
    reply: Any = None
    #: Where a game's end begins in ``events``, ``sends`` and ``closes``, when the command
    #: ended one (:meth:`parts`).
    ends_at: tuple[int, int, int] | None = None

    def mark_end(self) -> None:
        """What comes from here on is the game's end (its ``over`` event and message)."""
        self.ends_at = (len(self.events), len(self.sends), len(self.closes))

    def parts(self) -> tuple[Outcome, ...]:
        """The outcome as it is stored and told: whole; or, when it ended a game, what came
        before the end (the last round's result) and then the end, each stored and told in
        turn. A game's end is heavier to store than anything else a table does (its record,
        every player's row and rating), so the last round's result need not wait for it;
        and nothing the end tells is told before all of it is stored."""
        if self.ends_at is None:
            return (self,)
        e, s, c = self.ends_at
        before = Outcome(self.events[:e], self.sends[:s], self.closes[:c])
        end = Outcome(self.events[e:], self.sends[s:], self.closes[c:], self.reply)
        return (before, end) if before.events or before.sends or before.closes else (end,)


#: What a table holds as its outcome between two commands: nothing is added to it (the table
#: refuses an event or message outside a command, a bug, loudly:
#: :meth:`flyswat.table.context.Context.outcome`). So a command's outcome is the executor's
#: alone once handed over, and is freed as soon as it is told, rather than kept by its table
#: until the next command — long enough for a young collection to walk it and every message
#: in it (docs/BENCHMARKS.md, *The burst's survivors*).
BETWEEN = Outcome()


# -- the sources of chance and wall-clock time ------------------------------------------------


def _utc_now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(slots=True)
class Sources:
    """Where a table gets what it cannot compute: secret seeds, game ids, seat tokens, the
    wall-clock date for records, and the bots' randomness. Tests pass fixed ones."""

    seed: Callable[[], str] = lambda: secrets.token_hex(16)
    game_id: Callable[[], str] = lambda: uuid.uuid4().hex[:16]
    token: Callable[[], str] = lambda: secrets.token_urlsafe(24)
    wall: Callable[[], str] = _utc_now
    rng: random.Random = field(default_factory=lambda: random.Random(secrets.randbits(64)))

    @staticmethod
    def fixed(n: int = 0) -> Sources:
        """Deterministic sources for tests: seed ``seed-n``, tokens ``tok-1``, ``tok-2``…"""
        counter = iter(range(1, 1_000_000))
        return Sources(
            seed=lambda: f"seed-{n}",
            game_id=lambda: f"game-{n}",
            token=lambda: f"tok-{next(counter)}",
            wall=lambda: "2026-12-01T00:00:00Z",
            rng=random.Random(n),
        )
