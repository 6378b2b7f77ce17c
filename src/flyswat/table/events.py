"""A table's stored events: everything that changes a table, as a discriminated union.

The store keeps each table's events in order; a table is rebuilt by folding them through
:meth:`flyswat.table.context.Context.apply`, the same code that applies them in play. Events
are stored before anyone is told of them (the runner enforces it, :mod:`flyswat.server.runner`).

Version 1 stores (before slaps were stored one by one) wrote a ``round`` event when a round
closed; it still restores (:class:`LegacyRound`).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeAlias, cast

import orjson
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, field_validator

from flyswat.protocol import TableOptions
from flyswat.record import record_json


class _Event(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Created(_Event):
    """The table was made with ``options``; ``host`` is the host's seat."""

    kind: Literal["create"] = "create"
    options: TableOptions
    host: int
    created_at: str | None = None


class Joined(_Event):
    """A human took ``seat``; the store keeps the SHA-256 of its token, never the token."""

    kind: Literal["join"] = "join"
    seat: int
    name: str
    token_hash: str
    player: str | None = None  # the player's id, when they came with an identity
    rating: int | None = None  # their shown rating when they took the seat
    bot: bool = False  # the player is a bot account (a program)


class Released(_Event):
    """The lobby gave ``seat`` up: its holder never came, or left, for too long."""

    kind: Literal["release"] = "release"
    seat: int


class ReadySet(_Event):
    """``seat`` is ready (or not) to start."""

    kind: Literal["ready"] = "ready"
    seat: int
    ready: bool


class Started(_Event):
    """The game started with this secret seed (published at the end) and start seat."""

    kind: Literal["start"] = "start"
    game_id: str
    seed: str
    start: int
    started_at: str


class Revealed(_Event):
    """Reveal number ``turn`` (from 1): ``seat`` revealed ``card``; ``auto`` when the server
    revealed for an absent player."""

    kind: Literal["reveal"] = "reveal"
    turn: int
    seat: int
    card: str
    auto: bool = False


class Slapped(_Event):
    """An accepted hand in the round of ``turn``: ``seat`` on ``card`` at effective time
    ``ms`` (the arbiter's, from the instant the trigger was shown). Stored before the slapper
    is told ``accepted``. ``done``: the seat said done with it (a ``slap`` that says
    ``done``, a bot's last hand), as a :class:`SaidDone` after it would; stored only when
    true (a row as nodes before protocol 4 wrote and read it:
    :func:`flyswat.server.store.event_row`)."""

    kind: Literal["slap"] = "slap"
    turn: int
    seat: int
    card: str
    ms: float
    done: bool = False


class SaidDone(_Event):
    """``seat`` lays no more hands in the round of ``turn``: it said so (a bot: its plan is
    played out). One whose player dropped is :class:`Away` (before those, a ``done`` too)."""

    kind: Literal["done"] = "done"
    turn: int
    seat: int


class Away(_Event):
    """``seat``'s player dropped during the round of ``turn``: it is not waited for (as a
    ``done``), and may come back while its window is open (:class:`Back`)."""

    kind: Literal["away"] = "away"
    turn: int
    seat: int


class Back(_Event):
    """``seat``'s player, :class:`Away` in the round of ``turn``, reconnected while its slap
    window was still open: it may lay hands again."""

    kind: Literal["back"] = "back"
    turn: int
    seat: int


class TooFast(_Event):
    """``seat`` claimed a reaction faster than a human's in the round of ``turn``: refused."""

    kind: Literal["too_fast"] = "too_fast"
    turn: int
    seat: int


class Closed(_Event):
    """The round of ``turn`` was decided: its hands stack by effective time (R17–R20)."""

    kind: Literal["close"] = "close"
    turn: int


class Over(_Event):
    """The game ended; ``record`` is its game record (``docs/RECORD.md``) as JSON text (given
    as a dict, it is written so; :meth:`record_dict` reads it back).

    Text, not the record's few hundred dicts and lists: a finished table keeps it, and the
    writer's queue holds it through a burst of games' ends, where every young collection
    would walk each of those objects once (docs/BENCHMARKS.md, *The burst's survivors*)."""

    kind: Literal["over"] = "over"
    game_id: str
    record: str | None = None
    players: list[str | None] | None = None  # each seat's player id (None: a bot, no identity)
    too_fast: list[int] | None = None  # each seat's slaps refused as too fast in the game
    own_reveals: list[int] | None = None  # each seat's reveals not made by the turn timer
    takes_bots: bool = False  # the table took bot accounts: its people chose to meet them
    public: bool | None = None  # the table's ``public`` option (None: stored before it was)

    @field_validator("record", mode="before")
    @classmethod
    def _as_text(cls, value: Any) -> Any:
        return record_json(value) if isinstance(value, dict) else value

    def record_dict(self) -> dict[str, Any] | None:
        """The record, parsed."""
        return None if self.record is None else cast(dict[str, Any], orjson.loads(self.record))


class Expired(_Event):
    """The lobby was left unused for too long and closed."""

    kind: Literal["expire"] = "expire"


class RematchSet(_Event):
    """At the end, ``seat`` accepts (or declines) another game at the same seats."""

    kind: Literal["rematch"] = "rematch"
    seat: int
    accept: bool = True


class Reset(_Event):
    """Every seat accepted the rematch: the finished game is put away and the table is set
    for the next one (the seats and their players stay; too-fast counts start again)."""

    kind: Literal["reset"] = "reset"


class Left(_Event):
    """``seat``'s player gave the seat up; ``host`` is the host's seat after it."""

    kind: Literal["leave"] = "leave"
    seat: int
    host: int


class Kicked(_Event):
    """The host removed ``seat``'s player from the lobby."""

    kind: Literal["kick"] = "kick"
    seat: int


class SeatToBot(_Event):
    """The seat (free, or its player absent) is played by a server bot of ``level`` from now."""

    kind: Literal["seat_bot"] = "seat_bot"
    seat: int
    level: str


class LegacySlap(BaseModel):
    """A slap in a version 1 ``round`` event."""

    seat: int
    card: str
    ms: float | None = None


class LegacyRound(_Event):
    """Version 1: a round closed with these slaps, in the order applied."""

    kind: Literal["round"] = "round"
    turn: int
    slaps: list[LegacySlap]


Event: TypeAlias = Annotated[
    Created
    | Joined
    | Released
    | ReadySet
    | Started
    | Revealed
    | Slapped
    | SaidDone
    | Away
    | Back
    | TooFast
    | Closed
    | Over
    | Expired
    | LegacyRound
    | RematchSet
    | Reset
    | Left
    | Kicked
    | SeatToBot,
    Field(discriminator="kind"),
]
_adapter: TypeAdapter[Any] = TypeAdapter(cast(Any, Event))


def parse(kind: str, data: dict[str, Any]) -> Event:
    """The event stored as ``kind`` with ``data``; raises pydantic's ValidationError."""
    event: Event = _adapter.validate_python({**data, "kind": kind})
    return event


def data_of(event: Event) -> dict[str, Any]:
    """What the store keeps of ``event`` beside its kind."""
    return event.model_dump(exclude={"kind"}, mode="json")
