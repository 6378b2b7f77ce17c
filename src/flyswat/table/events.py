"""A table's stored events: everything that changes a table, each a Struct named by its kind.

The store keeps each table's events in order; a table is rebuilt by folding them through
:meth:`flyswat.table.context.Context.apply`, the same code that applies them in play. Events
are stored before anyone is told of them (the runner enforces it, :mod:`flyswat.server.runner`).

Version 1 stores (before slaps were stored one by one) wrote a ``round`` event when a round
closed; it still restores (:class:`LegacyRound`).
"""

from __future__ import annotations

from typing import Any, ClassVar, TypeAlias, cast

import msgspec
import orjson
from pydantic import BaseModel
from pydantic import ValidationError as _ModelError

from flyswat.protocol import TableOptions
from flyswat.record import record_json


class _Event(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """An event: a msgspec Struct (made and written at a tenth of a pydantic model's cost,
    docs/BENCHMARKS.md, *Events as msgspec Structs*); its ``kind`` names it in the store
    and is not one of its fields."""

    kind: ClassVar[str]


class Created(_Event, frozen=True):
    """The table was made with ``options``; ``host`` is the host's seat."""

    kind: ClassVar[str] = "create"
    options: TableOptions
    host: int
    created_at: str | None = None


class Joined(_Event, frozen=True):
    """A human took ``seat``; the store keeps the SHA-256 of its token, never the token."""

    kind: ClassVar[str] = "join"
    seat: int
    name: str
    token_hash: str
    player: str | None = None  # the player's id, when they came with an identity
    rating: int | None = None  # their shown rating when they took the seat
    bot: bool = False  # the player is a bot account (a program)


class Released(_Event, frozen=True):
    """The lobby gave ``seat`` up: its holder never came, or left, for too long."""

    kind: ClassVar[str] = "release"
    seat: int


class ReadySet(_Event, frozen=True):
    """``seat`` is ready (or not) to start."""

    kind: ClassVar[str] = "ready"
    seat: int
    ready: bool


class Started(_Event, frozen=True):
    """The game started with this secret seed (published at the end) and start seat."""

    kind: ClassVar[str] = "start"
    game_id: str
    seed: str
    start: int
    started_at: str


class Revealed(_Event, frozen=True):
    """Reveal number ``turn`` (from 1): ``seat`` revealed ``card``; ``auto`` when the server
    revealed for an absent player."""

    kind: ClassVar[str] = "reveal"
    turn: int
    seat: int
    card: str
    auto: bool = False


class Slapped(_Event, frozen=True, omit_defaults=True):
    """An accepted hand in the round of ``turn``: ``seat`` on ``card`` at effective time
    ``ms`` (the arbiter's, from the instant the trigger was shown). Stored before the slapper
    is told ``accepted``. ``done``: the seat said done with it (a ``slap`` that says
    ``done``, a bot's last hand), as a :class:`SaidDone` after it would; written only when
    true (its only default: a row as nodes before protocol 4 wrote and read it)."""

    kind: ClassVar[str] = "slap"
    turn: int
    seat: int
    card: str
    ms: float
    done: bool = False


class SaidDone(_Event, frozen=True):
    """``seat`` lays no more hands in the round of ``turn``: it said so (a bot: its plan is
    played out). One whose player dropped is :class:`Away` (before those, a ``done`` too)."""

    kind: ClassVar[str] = "done"
    turn: int
    seat: int


class Away(_Event, frozen=True):
    """``seat``'s player dropped during the round of ``turn``: it is not waited for (as a
    ``done``), and may come back while its window is open (:class:`Back`)."""

    kind: ClassVar[str] = "away"
    turn: int
    seat: int


class Back(_Event, frozen=True):
    """``seat``'s player, :class:`Away` in the round of ``turn``, reconnected while its slap
    window was still open: it may lay hands again."""

    kind: ClassVar[str] = "back"
    turn: int
    seat: int


class TooFast(_Event, frozen=True):
    """``seat`` claimed a reaction faster than a human's in the round of ``turn``: refused."""

    kind: ClassVar[str] = "too_fast"
    turn: int
    seat: int


class Closed(_Event, frozen=True):
    """The round of ``turn`` was decided: its hands stack by effective time (R17–R20)."""

    kind: ClassVar[str] = "close"
    turn: int


class Over(_Event, frozen=True):
    """The game ended; ``record`` is its game record (``docs/RECORD.md``) as JSON text (given
    as a dict, it is written so; :meth:`record_dict` reads it back).

    Text, not the record's few hundred dicts and lists: a finished table keeps it, and the
    writer's queue holds it through a burst of games' ends, where every young collection
    would walk each of those objects once (docs/BENCHMARKS.md, *The burst's survivors*)."""

    kind: ClassVar[str] = "over"
    game_id: str
    record: str | None = None
    players: list[str | None] | None = None  # each seat's player id (None: a bot, no identity)
    too_fast: list[int] | None = None  # each seat's slaps refused as too fast in the game
    own_reveals: list[int] | None = None  # each seat's reveals not made by the turn timer
    takes_bots: bool = False  # the table took bot accounts: its people chose to meet them
    public: bool | None = None  # the table's ``public`` option (None: stored before it was)

    def __post_init__(self) -> None:
        if isinstance(self.record, dict):  # given as a dict: written as text
            msgspec.structs.force_setattr(self, "record", record_json(self.record))

    def record_dict(self) -> dict[str, Any] | None:
        """The record, parsed."""
        return None if self.record is None else cast(dict[str, Any], orjson.loads(self.record))


class Expired(_Event, frozen=True):
    """The lobby was left unused for too long and closed."""

    kind: ClassVar[str] = "expire"


class RematchSet(_Event, frozen=True):
    """At the end, ``seat`` accepts (or declines) another game at the same seats."""

    kind: ClassVar[str] = "rematch"
    seat: int
    accept: bool = True


class Reset(_Event, frozen=True):
    """Every seat accepted the rematch: the finished game is put away and the table is set
    for the next one (the seats and their players stay; too-fast counts start again)."""

    kind: ClassVar[str] = "reset"


class Left(_Event, frozen=True):
    """``seat``'s player gave the seat up; ``host`` is the host's seat after it."""

    kind: ClassVar[str] = "leave"
    seat: int
    host: int


class Kicked(_Event, frozen=True):
    """The host removed ``seat``'s player from the lobby."""

    kind: ClassVar[str] = "kick"
    seat: int


class SeatToBot(_Event, frozen=True):
    """The seat (free, or its player absent) is played by a server bot of ``level`` from now."""

    kind: ClassVar[str] = "seat_bot"
    seat: int
    level: str


class LegacySlap(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A slap in a version 1 ``round`` event."""

    seat: int
    card: str
    ms: float | None = None


class LegacyRound(_Event, frozen=True):
    """Version 1: a round closed with these slaps, in the order applied."""

    kind: ClassVar[str] = "round"
    turn: int
    slaps: list[LegacySlap]


#: Every event (and the version 1 ``round``), by its ``kind``.
EVENTS: tuple[type[_Event], ...] = (
    Created, Joined, Released, ReadySet, Started, Revealed, Slapped, SaidDone, Away, Back,
    TooFast, Closed, Over, Expired, LegacyRound, RematchSet, Reset, Left, Kicked, SeatToBot,
)  # fmt: skip
KINDS: dict[str, type[_Event]] = {e.kind: e for e in EVENTS}
Event: TypeAlias = _Event


class NotAnEvent(ValueError):
    """A stored row that is no event."""


def _encode_hook(value: Any) -> Any:
    if isinstance(value, BaseModel):  # a table's options
        return value.model_dump(mode="json")
    raise NotImplementedError(type(value))


def _decode_hook(kind: type, value: Any) -> Any:
    if isinstance(kind, type) and issubclass(kind, BaseModel):
        return kind.model_validate(value)
    raise NotImplementedError(kind)


_encoder = msgspec.json.Encoder(enc_hook=_encode_hook)


def parse(kind: str, data: dict[str, Any]) -> Event:
    """The event stored as ``kind`` with ``data``; raises :class:`NotAnEvent`."""
    model = KINDS.get(kind)
    if model is None:
        raise NotAnEvent(f"no event is a {kind!r}")
    try:
        return msgspec.convert(data, model, dec_hook=_decode_hook)
    except (msgspec.ValidationError, _ModelError) as e:
        raise NotAnEvent(f"not a {kind} event: {e}") from None


def data_of(event: Event) -> dict[str, Any]:
    """What the store keeps of ``event`` beside its kind."""
    return cast(dict[str, Any], msgspec.to_builtins(event, enc_hook=_encode_hook))


def data_json(event: Event) -> bytes:
    """:func:`data_of` as JSON, made in one step."""
    return _encoder.encode(event)
