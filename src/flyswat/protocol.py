"""The wire protocol: every HTTP body and WebSocket message, as a model.

``docs/PROTOCOL.md`` describes them in prose; ``docs/protocol.schema.json`` is generated from
these models (:func:`json_schema`, or ``python -m flyswat.protocol > docs/...``).

Client messages are msgspec Structs, parsed with :func:`parse_client` (raises
:class:`MalformedError` with a code, never anything else); HTTP bodies and server messages
are pydantic models, and server messages are built from them and sent as JSON. A
``view`` field is always ``flyswat.view.view(game, seat).to_json()`` for the receiving seat
(``seat=None`` for a spectator): nothing else about the cards is ever sent.
"""

from __future__ import annotations

import json
import sys
from typing import Annotated, Any, Literal, TypeAlias, Union, cast

import msgspec
import orjson
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter
from typing_extensions import TypedDict

from flyswat.cards import DECK
from flyswat.errors import MalformedError
from flyswat.rules import MAX_SEATS, MAX_SLAP_WINDOW_MS, MIN_SEATS, MIN_SLAP_WINDOW_MS

PROTOCOL_VERSION = 4
MAX_MESSAGE_BYTES = 4096
MAX_NAME = 32
#: A join's request key (:class:`JoinTable`): base64url, 22 characters (16 bytes) to 64.
REQUEST_KEY_MIN, REQUEST_KEY_MAX = 22, 64
REQUEST_KEY_PATTERN = r"^[A-Za-z0-9_-]+$"

# -- shared parts ---------------------------------------------------------------------------


class _Model(BaseModel):
    # Strict: a string is not a number and a number is not a boolean (docs/PROTOCOL.md).
    model_config = ConfigDict(extra="forbid", strict=True)


# -- the view (flyswat.view.View.to_json): the one thing sent about the game ---------------


class SeatCard(TypedDict):
    """A seat and a card: a hand laid, a fly won, a penalty paid."""

    seat: int
    card: str


class OpenRoundView(TypedDict):
    """An open slap round as one seat sees it: hands laid per seat, your own hands (in the
    order you laid them), whether you said done. Others' cards stay hidden until the close."""

    trigger: str
    seat: int
    laid: list[int]
    mine: list[str]
    done: bool


class LastRoundView(TypedDict):
    """The last resolved round, all public: allowed colours, hands in stacking order, wins and
    penalties in the order applied (R17–R20)."""

    trigger: str
    seat: int
    allowed: list[str]
    slaps: list[SeatCard]
    won: list[SeatCard]
    penalties: list[SeatCard]


class ResultView(TypedDict):
    """Per seat: points (R23), flies won, place (R24)."""

    points: list[int]
    flies: list[int]
    places: list[int]


class GameView(TypedDict):
    """One seat's view of the game (R25); ``seat`` is null for a spectator."""

    seat: int | None
    seats: int
    hands: int
    to_move: int
    turn: int
    draw_counts: list[int]
    won_counts: list[int]
    won: list[str]
    centre: list[str]
    box: list[str]
    last_card: str | None
    round: OpenRoundView | None
    last_round: LastRoundView | None
    over: bool
    result: ResultView | None
    revealed_draw: list[list[str]] | None
    revealed_won: list[list[str]] | None
    removed: int
    revealed_removed: list[str] | None


class ViewDelta(TypedDict, total=False):
    """The public fields of the view that changed since the table's previous broadcast
    (protocol 3, :mod:`flyswat.wire`): merge them into the last view you have. The public
    view is a spectator's: ``seat`` is null, ``won`` empty, ``round.mine`` empty."""

    seats: int
    hands: int
    to_move: int
    turn: int
    draw_counts: list[int]
    won_counts: list[int]
    centre: list[str]
    box: list[str]
    last_card: str | None
    round: OpenRoundView | None
    last_round: LastRoundView | None
    over: bool
    result: ResultView | None
    revealed_draw: list[list[str]] | None
    revealed_won: list[list[str]] | None
    removed: int
    revealed_removed: list[str] | None
    seat: None
    won: list[str]


class You(TypedDict):
    """The private part of your view (protocol 3), sent when it changed: your seat, your won
    cards, your hands laid in the open round and whether you said done."""

    seat: int
    won: list[str]
    mine: list[str]
    done: bool


class BotSeat(_Model):
    """A seat played by a server bot of the given level (see ``flyswat.bots.LEVELS``)."""

    seat: int = Field(ge=0, le=MAX_SEATS - 1)
    level: str = "normal"


class TableOptions(_Model):
    """The options a table is created with. The rule options' bounds are the rules' own
    (:class:`flyswat.rules.Rules`): ``remove`` is at most 112 - ``seats``, which the rules
    check (``bad_rules``)."""

    seats: int = Field(
        4, ge=MIN_SEATS, le=MAX_SEATS, description="number of seats, bots included (R4)"
    )
    bots: list[BotSeat] = Field(default_factory=list, description="which seats are bots")
    remove: int = Field(
        0,
        ge=0,
        le=len(DECK) - MIN_SEATS,
        description="cards removed unseen (R6): at most 112 - seats",
    )
    slap_window_ms: int = Field(
        3000, ge=MIN_SLAP_WINDOW_MS, le=MAX_SLAP_WINDOW_MS, description="slap window (R21)"
    )
    turn_timeout_ms: int = Field(
        4000, ge=200, le=60_000, description="the server reveals for a player after this"
    )
    start: int | None = Field(
        None, ge=0, le=MAX_SEATS - 1, description="start seat (R9); None = random"
    )
    public: bool = Field(True, description="listed in GET /api/tables; false: by link only")
    autofill_ms: int | None = Field(
        None, ge=3000, le=120_000,
        description="after this long in the lobby, bots take the free seats and the game starts",
    )  # fmt: skip
    bot_accounts: bool = Field(
        False, description="bot accounts (programs) may join; those who sit here chose it"
    )
    invite: list[str] = Field(
        default_factory=list, max_length=MAX_SEATS - 1,
        description="ids of bot accounts the host invites (the table need not take any other)",
    )  # fmt: skip
    reserved: str | None = Field(
        None, max_length=64,
        description="a challenge's table: its free seat is kept for this player's id",
    )  # fmt: skip


class PlayerInfo(_Model):
    """One seat of a table as everyone sees it."""

    seat: int
    kind: Literal["human", "bot"]
    name: str | None = Field(description="display name; None while the seat is free")
    level: str | None = None
    joined: bool
    ready: bool
    connected: bool
    host: bool = False
    too_fast: int = Field(0, description="slaps refused as faster than humanly possible")
    player: str | None = Field(None, description="the player's id, when they have an identity")
    rating: int | None = Field(None, description="shown rating (a bot's is its level's)")
    rematch: bool = Field(False, description="at the end: accepted another game")
    bot_account: bool = Field(False, description="a bot account: a program, not a person")


class TableInfo(_Model):
    """The public state of a table: options, players, and the fairness commitment."""

    code: str
    state: Literal["lobby", "playing", "over"]
    options: TableOptions
    players: list[PlayerInfo]
    spectators: int = 0
    game_id: str | None = None
    commitment: str | None = Field(None, description="SHA-256 hex of the seed, from the start")
    seed: str | None = Field(None, description="the seed itself, once the game is over")
    record_url: str | None = None
    fill_in_ms: int | None = Field(
        None, description="lobby of a Play now table: ms until bots take the free seats"
    )
    games: int = Field(0, description="games played at this table (rematches count)")


# -- HTTP bodies ----------------------------------------------------------------------------


class CreateTable(TableOptions):
    """``POST /api/tables``: the options, and the host's display name (the host takes a seat);
    ``player`` and ``secret``: the host's identity (their own name is then used)."""

    name: str = Field(min_length=1, max_length=MAX_NAME)
    player: str | None = Field(None, max_length=64)
    secret: str | None = Field(None, max_length=64)


class JoinTable(_Model):
    """``POST /api/tables/{code}/join``; ``player`` and ``secret`` as in :class:`CreateTable`.

    ``request``: a key the client draws at random for one join attempt and sends again when
    it retries that attempt (a reply lost to a dropped connection or a restart): a join whose
    key was already used at the table answers that seat and its token, storing nothing. The
    token is derived from the key, so the key is as secret as the token; at least 22
    base64url characters (16 random bytes). With an identity, the identity does this and the
    key is not used."""

    name: str = Field(min_length=1, max_length=MAX_NAME)
    player: str | None = Field(None, max_length=64)
    secret: str | None = Field(None, max_length=64)
    request: str | None = Field(
        None,
        min_length=REQUEST_KEY_MIN,
        max_length=REQUEST_KEY_MAX,
        pattern=REQUEST_KEY_PATTERN,
        description="random, secret: 16 or more random bytes in base64url, one per join attempt",
    )


class TableList(_Model):
    """``GET /api/tables``: the tables one can join (in the lobby, a seat free), newest first,
    one page of them; ``next`` is the cursor of the next page (``?after=``), null at the end."""

    tables: list[TableInfo]
    levels: list[str]
    next: str | None = None


class LiveGame(_Model):
    """One public game being played, as ``GET /api/live`` lists it."""

    code: str
    rating: int | None = Field(
        description="the table's rating: the mean of its seats' shown ratings (a player's "
        "when they sat down, a bot's level's); null when no seat has one"
    )
    players: list[PlayerInfo]
    spectators: int = Field(description="spectators watching it now (a node's own count)")
    games: int = Field(0, description="games finished at this table before this one")


class LiveList(_Model):
    """``GET /api/live``: the public games being played, the best-rated first (then the most
    watched); ``total`` counts them all, ``games`` is the first ``limit`` of them."""

    games: list[LiveGame]
    total: int


class StartTable(_Model):
    """``POST /api/tables/{code}/start``: the host's token."""

    token: str = Field(max_length=64)


class Seated(_Model):
    """Reply to create and join: the seat and its secret token (keep it to reconnect)."""

    code: str
    seat: int
    token: str
    host: bool
    ws_url: str
    table_url: str


# -- players (HTTP) -------------------------------------------------------------------------


class NewPlayer(_Model):
    """``POST /api/players``: the name, chosen once (unique per server)."""

    name: str = Field(min_length=1, max_length=MAX_NAME)


class PlayerAuth(_Model):
    """A player's id and secret: ``POST /api/play``, ``POST /api/players/{id}/claim-code``."""

    player: str = Field(max_length=64)
    secret: str = Field(max_length=64)


class NewBot(_Model):
    """``POST /api/bots``: the owner's own identity, and the bot account's name."""

    player: str = Field(max_length=64)
    secret: str = Field(max_length=64)
    name: str = Field(min_length=1, max_length=MAX_NAME)


class NewChallenge(_Model):
    """``POST /api/challenges``: the challenger's identity and the player they challenge."""

    player: str = Field(max_length=64)
    secret: str = Field(max_length=64)
    opponent: str = Field(max_length=64)


class ChallengeParty(_Model):
    """A player in a challenge: id and name."""

    id: str
    name: str


class Challenge(_Model):
    """One challenge: the private table it opened (``code``) and what became of it."""

    id: str
    code: str
    state: Literal["open", "accepted", "declined", "expired"]
    challenger: ChallengeParty
    opponent: ChallengeParty
    expires_in_s: int = Field(description="seconds it stays open; 0 once decided or expired")


class Challenges(_Model):
    """``POST /api/challenges/mine``: the open challenges to you, and yours (open, and the
    latest decided: accepted, declined or expired), newest first."""

    incoming: list[Challenge]
    outgoing: list[Challenge]


class ChallengeMade(_Model):
    """Reply to ``POST /api/challenges``: the challenge, and the challenger's seat at its
    table (they host it)."""

    challenge: Challenge
    seat: Seated


# -- arenas (HTTP) --------------------------------------------------------------------------


class NewArena(_Model):
    """``POST /api/operator/arenas`` (the operator's secret): an arena of ``minutes`` minutes
    that starts in ``starts_in_s`` seconds."""

    name: str = Field(min_length=1, max_length=MAX_NAME)
    minutes: int = Field(ge=1, le=720)
    starts_in_s: int = Field(0, ge=0, le=7 * 24 * 3600)


class ArenaWinner(_Model):
    """An ended arena's winner: the leader of its frozen standings."""

    id: str
    name: str
    points: int


class ArenaInfo(_Model):
    """One arena: its phase, how long until it starts and ends, its players and winner."""

    id: str
    name: str
    phase: Literal["upcoming", "running", "ended"]
    starts_in_s: int = Field(description="seconds until it starts; 0 once started")
    ends_in_s: int = Field(description="seconds until it ends; 0 once ended")
    minutes: int
    players: int = Field(description="players who joined it")
    winner: ArenaWinner | None = Field(description="once ended and frozen: its winner")


class Arenas(_Model):
    """``GET /api/arenas``: the arenas not yet ended (the soonest to end first), then the
    latest ended ones."""

    arenas: list[ArenaInfo]


class ArenaStanding(_Model):
    """A player in an arena's standings."""

    rank: int
    id: str
    name: str
    points: int
    games: int
    wins: int
    fire: bool = Field(description="won their last two games: the next one counts double")
    playing: bool = Field(description="at an unfinished table of the arena")


class ArenaMe(_Model):
    """The caller in an arena: their place, and their table when they are paired at one."""

    rank: int
    points: int
    games: int
    active: bool = Field(description="taking part (paired when waiting); false after leave")
    seat: Seated | None = Field(description="their seat at the arena's table they are at")


class ArenaView(_Model):
    """``GET /api/arenas/{id}``, and ``POST /api/arenas/{id}/me``, ``/join`` and ``/leave``
    (``me``: the caller, once joined): the arena and its standings, best first."""

    arena: ArenaInfo
    standings: list[ArenaStanding]
    me: ArenaMe | None = None


class ArenaResult(_Model):
    """One ended arena of a player: their final place and points."""

    id: str
    name: str
    place: int | None
    points: int
    games: int
    players: int
    won: bool


class ArenaResults(_Model):
    """``GET /api/players/{id}/arenas``: the player's ended arenas (the latest first) and how
    many they won."""

    arenas: list[ArenaResult]
    won: int


class Identity(_Model):
    """Reply to ``POST /api/players``, ``POST /api/players/claim`` and ``POST /api/bots``:
    keep the secret. ``bot``: this identity is a bot account."""

    player: str
    secret: str
    name: str
    bot: bool = False


class ClaimCode(_Model):
    """Reply to ``POST /api/players/{id}/claim-code``: a one-time code for another device."""

    code: str
    expires_in_s: int


class Claim(_Model):
    """``POST /api/players/claim``: the code shown on the other device."""

    code: str = Field(max_length=32)


#: What ``provisional`` says wherever a rating is shown.
_PROVISIONAL = "sigma still above 6 (about the first six games): the rating is still unsure"


class Profile(_Model):
    """``GET /api/players/{id}``: public facts about a player."""

    id: str
    name: str
    created_at: str
    rating: int = Field(description="shown rating: round(40 mu), 1000 for a new player")
    mu: float
    sigma: float
    provisional: bool = Field(False, description=_PROVISIONAL)
    rank: int | None = Field(description="place on the leaderboard; null before a rated game")
    games: int
    rated_games: int
    wins: int
    points: int
    flies: int
    too_fast: int
    reaction_ms: int | None = Field(description="mean effective time of their accepted slaps")
    bot: bool = Field(False, description="a bot account: a program, ranked on its own board")
    owner: str | None = Field(None, description="a bot account's: the id of its owner")


class PlayedGame(_Model):
    """One game of a player, as ``GET /api/players/{id}/games`` lists it."""

    game_id: str
    code: str | None = Field(description="the table's code; null for a private table")
    ended_at: str
    seat: int
    seats: int
    place: int
    points: int
    flies: int
    too_fast: int
    slaps: int
    reaction_ms: int | None
    rated: bool
    rating_before: int
    rating_after: int
    delta: int
    provisional: bool = Field(False, description=_PROVISIONAL)
    record_url: str


class PlayedGames(_Model):
    """``GET /api/players/{id}/games[?before=N&limit=N]``: newest first; ``next`` is the
    ``before`` of the next page, null at the end."""

    games: list[PlayedGame]
    next: int | None = None


class Leader(_Model):
    """One row of the leaderboard."""

    rank: int
    id: str
    name: str
    rating: int
    conservative: int = Field(description="round(40 (mu - 3 sigma)): what the order is by")
    games: int
    rated_games: int
    provisional: bool = Field(False, description=_PROVISIONAL)
    bot: bool = False


class Leaderboard(_Model):
    """``GET /api/leaderboard[?offset=N&limit=N&pool=bots]``: the people's, or the bot
    accounts' own board."""

    players: list[Leader]
    total: int
    bots: dict[str, int] = Field(description="the bots' fixed shown ratings, by level")


class GameSeat(_Model):
    """One seat of a finished game in :class:`GameSummary`."""

    seat: int
    place: int
    player: str | None
    level: str | None
    flagged: bool
    name: str | None = None
    bot: bool | None = None
    rated: bool | None = None
    rating_before: int | None = None
    rating_after: int | None = None
    delta: int | None = None
    provisional: bool | None = Field(None, description=_PROVISIONAL)


class GameSummary(_Model):
    """``GET /api/games/{game_id}``: who played, their places, and their rating changes."""

    game_id: str
    code: str | None = Field(description="the table's code; null for a private table")
    ended_at: str
    record_url: str
    seats: list[GameSeat]


class ListedSeat(_Model):
    """One seat of a listed game in :class:`ListedGames`: its name and kind as the record
    shows them, and the identity's id, bot mark and rating after the game when it had one."""

    seat: int
    place: int
    name: str | None
    kind: str
    level: str | None = None
    player: str | None = None
    bot: bool | None = None
    rating: int | None = None


class ListedGame(_Model):
    """One finished game of a public table in :class:`ListedGames`."""

    game_id: str
    code: str
    ended_at: str
    seats: int
    rated: bool = Field(description="the game moved someone's rating")
    players: list[ListedSeat]
    record_url: str


class ListedGames(_Model):
    """``GET /api/games[?player=ID&name=TEXT&seats=N&rated=true|false&before=N&limit=N]``:
    the recent games of public tables, newest first, filtered by a player (an id, or the
    beginning of a name), a number of seats, rated or not; ``next`` is the ``before`` of the
    next page, null at the end. A private table's games are never listed."""

    games: list[ListedGame]
    next: int | None = None


class HttpError(_Model):
    """Any HTTP error reply (status 4xx)."""

    error: str
    message: str


# -- client -> server -----------------------------------------------------------------------
#
# msgspec Structs, each tagged by its ``type``: one C call checks a message's bytes and makes
# it (a tenth of what parsing and validating a pydantic model cost, docs/BENCHMARKS.md, *Client
# messages parsed by msgspec*). Strict as the models are: a string is not a number and a
# number is not a boolean; no field the message does not declare.


class _Client(msgspec.Struct, tag_field="type", forbid_unknown_fields=True, kw_only=True):
    pass


class Hello(_Client, tag="hello"):
    """First message on a socket: a seat token to play, none to watch."""

    token: str | None = None


class Ready(_Client, tag="ready"):
    """Say you are ready (or not) in the lobby."""

    ready: bool = True


class Start(_Client, tag="start"):
    """The host starts the game: every human seat taken and ready."""


class Reveal(_Client, tag="reveal"):
    """Reveal the top card of your draw pile: only on your turn, no round open (R10)."""

    seat: Annotated[int | None, msgspec.Meta(description="optional; must be your own seat")] = None


class Slap(_Client, tag="slap"):
    """Lay a hand on a centre card during a slap round (R16).

    ``ms``: your reaction time, measured on your own monotonic clock from painting the
    trigger card to the input event. ``turn``: the ``turn`` of the reveal that opened the
    round (a slap meant for an earlier round is refused). ``done``: this is your last hand
    this round — once the slap counts, you are done (R21) as a :class:`Done` after it would
    say, in one message; a refused slap changes nothing, its ``done`` included.
    """

    card: Annotated[str, msgspec.Meta(max_length=8)]
    ms: Annotated[int, msgspec.Meta(ge=0, le=60_000)] | None = None
    turn: int | None = None
    seat: int | None = None
    done: bool = False


class Done(_Client, tag="done"):
    """Say you will lay no more hands this round (R21)."""

    turn: int | None = None
    seat: int | None = None


class Pong(_Client, tag="pong"):
    """Answer to a server ``ping``, at once: the server measures round-trip times with it."""

    id: int


class Rematch(_Client, tag="rematch"):
    """At the end: accept (or decline) another game at the same seats."""

    accept: bool = True


class Leave(_Client, tag="leave"):
    """In the lobby or at the end: give your seat up."""


class SeatBot(_Client, tag="seat_bot"):
    """Host only, in the lobby or at the end: a bot of ``level`` takes seat ``target`` (free,
    or its player absent)."""

    target: Annotated[int, msgspec.Meta(ge=0, le=MAX_SEATS - 1)]
    level: Annotated[str, msgspec.Meta(max_length=16)] = "normal"


class Kick(_Client, tag="kick"):
    """Host only, in the lobby: remove the player of seat ``target`` from the table."""

    target: Annotated[int, msgspec.Meta(ge=0, le=MAX_SEATS - 1)]


#: The quick reactions a seat may send (``React``): keys, never text; each client shows its
#: own words and sign for each (👍 nice, 😮 wow, 😅 oops, 👏 well played, 😄 smile).
REACTIONS = ("nice", "wow", "oops", "well_played", "smile")


class React(_Client, tag="react"):
    """A quick reaction at the table, one of :data:`REACTIONS`; seats only, never while a
    slap round is open (``reaction_in_round``), a few at a time (``reaction_limited``)."""

    reaction: Annotated[
        str, msgspec.Meta(max_length=16, description="one of: " + ", ".join(REACTIONS))
    ]


#: Every client message, each declared once, by its Struct (whose tag, its ``type``, names
#: it): the parser (:func:`parse_client`), the schema and the tables' dispatch
#: (:data:`flyswat.table.core.SEAT_MESSAGES`) are all made from this.
CLIENT_MESSAGES: tuple[type[_Client], ...] = (
    Hello, Ready, Start, Reveal, Slap, Done, Pong, Rematch, Leave, SeatBot, Kick, React,
)  # fmt: skip
#: A client message: any of :data:`CLIENT_MESSAGES`.
ClientMessage: TypeAlias = _Client
#: Each client message's Struct by its ``type``.
CLIENT_TYPES: dict[str, type[_Client]] = {
    cast(str, m.__struct_config__.tag): m for m in CLIENT_MESSAGES
}
_CLIENT_UNION: Any = Union[CLIENT_MESSAGES]  # noqa: UP007
_client_decoder: msgspec.json.Decoder[Any] = msgspec.json.Decoder(_CLIENT_UNION)

# -- server -> client -----------------------------------------------------------------------


class Welcome(_Model):
    """Reply to ``hello``: your seat (None when watching), the table, your view if started."""

    type: Literal["welcome"] = "welcome"
    protocol: int = PROTOCOL_VERSION
    seat: int | None
    table: TableInfo
    view: GameView | None
    window_left_ms: int | None = Field(
        None, description="during a round: ms left of its slap window; None otherwise"
    )
    turn_deadline_ms: int | None = Field(
        None, description="ms until the server reveals for the human to move; None otherwise"
    )


class TableUpdate(_Model):
    """The table changed: someone joined, got ready, connected or left."""

    type: Literal["table"] = "table"
    table: TableInfo


class Started(_Model):
    """The game started: the commitment to the secret seed, the start seat, your view."""

    type: Literal["started"] = "started"
    commitment: str
    start: int
    table: TableInfo
    view: GameView
    turn_deadline_ms: int | None = Field(
        None, description="ms until the server reveals for the human to move; None otherwise"
    )


class Revealed(_Model):
    """A card was revealed; sent to everyone in one broadcast step (R10).

    ``round`` is true when it opened a slap round; ``window_ms`` is then the slap window.
    ``auto`` is true when the server revealed for an absent player (turn timeout).
    """

    type: Literal["reveal"] = "reveal"
    turn: int
    seat: int
    card: str
    round: bool
    window_ms: int | None
    auto: bool
    view: ViewDelta
    you: You | None = None
    turn_deadline_ms: int | None = Field(
        None, description="ms until the server reveals for the human to move; None otherwise"
    )


class Accepted(_Model):
    """Your slap was accepted (to you only); ``ms`` is its effective time after arbitration."""

    type: Literal["accepted"] = "accepted"
    turn: int
    card: str
    ms: int


class Hands(_Model):
    """During a round, hands were laid or done said: what changed (``round.laid``: the hands
    laid per seat; your own in ``you``, never others' cards). Coalesced: one message for
    the hands of up to 100 ms."""

    type: Literal["hands"] = "hands"
    turn: int
    view: ViewDelta
    you: You | None = None


class RoundClosed(_Model):
    """The round was decided; ``view.last_round`` has its slaps, wins and penalties."""

    type: Literal["round"] = "round"
    turn: int
    view: ViewDelta
    you: You | None = None
    turn_deadline_ms: int | None = Field(
        None, description="ms until the server reveals for the human to move; None otherwise"
    )


class Over(_Model):
    """The game is over: result, the seed (check it against the commitment), the record."""

    type: Literal["over"] = "over"
    result: dict[str, list[int]]
    seed: str
    commitment: str
    record_url: str
    table: TableInfo
    view: ViewDelta
    you: You | None = None


class Ping(_Model):
    """Answer with ``{"type": "pong", "id": <same id>}`` at once."""

    type: Literal["ping"] = "ping"
    id: int


class Rematched(_Model):
    """A rematch began: the finished game is put away; ``started`` follows."""

    type: Literal["rematched"] = "rematched"
    table: TableInfo


class Error(_Model):
    """Your last message was refused and changed nothing. ``code`` is machine-readable."""

    type: Literal["error"] = "error"
    code: str
    message: str


class Reacted(_Model):
    """A seat reacted (:data:`REACTIONS`), to everyone at the table, spectators too: show it
    briefly by the seat. Not part of the game: never stored, not in the record."""

    type: Literal["react"] = "react"
    seat: int
    reaction: str


class Moved(_Model):
    """This table is served by another node: open ``url`` (the same path, with the same
    hello) — or, when it is none, the address you first used, again. The connection closes
    (4302)."""

    type: Literal["moved"] = "moved"
    url: str | None = None


ServerMessage: TypeAlias = Annotated[
    Welcome
    | TableUpdate
    | Started
    | Revealed
    | Accepted
    | Hands
    | RoundClosed
    | Over
    | Ping
    | Error
    | Rematched
    | Reacted
    | Moved,
    Field(discriminator="type"),
]


def parse_client(raw: str | bytes) -> ClientMessage:
    """Parse one client message; raises :class:`MalformedError` (codes ``too_big``,
    ``malformed``, ``unknown_type``) when it is not a valid message."""
    size = len(raw.encode("utf-8")) if isinstance(raw, str) else len(raw)
    if size > MAX_MESSAGE_BYTES:
        raise MalformedError(f"message of {size} bytes; at most {MAX_MESSAGE_BYTES}", "too_big")
    try:
        message: ClientMessage = _client_decoder.decode(raw)
    except msgspec.DecodeError as e:
        raise _refusal(raw, e) from None
    return message


def _refusal(raw: str | bytes, error: msgspec.DecodeError) -> MalformedError:
    """Why ``raw`` is not a client message (the parser refused it with ``error``): read again
    as plain JSON for what is wrong with it as a whole, else the parser's word on the field."""
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as e:
        why = "JSON nested too deeply" if "depth limit" in str(e) else "not JSON"
        return MalformedError(why, "malformed")
    if not isinstance(data, dict) or not isinstance(data.get("type"), str):
        return MalformedError('a message is a JSON object with a string "type"', "malformed")
    if data["type"] not in CLIENT_TYPES:
        return MalformedError(f"unknown message type {data['type']!r}", "unknown_type")
    what, _, at = str(error).partition(" - at `$")
    where = at.rstrip("`").lstrip(".")
    if where == "type":  # the tag read first, another "type" after it (JSON reads the last)
        return MalformedError('a message names its "type" once', "malformed")
    return MalformedError(f"bad {data['type']} message: {where + ': ' if where else ''}{what}")


def json_schema() -> dict[str, Any]:
    """The JSON schema of every message and HTTP body, as written to docs/protocol.schema.json."""
    http: list[type[BaseModel]] = [
        TableOptions,
        CreateTable,
        JoinTable,
        StartTable,
        TableList,
        LiveList,
        Seated,
        TableInfo,
        HttpError,
        NewPlayer,
        PlayerAuth,
        Identity,
        NewBot,
        ClaimCode,
        Claim,
        Profile,
        PlayedGames,
        Leaderboard,
        GameSummary,
        ListedGames,
        NewChallenge,
        Challenge,
        Challenges,
        ChallengeMade,
        NewArena,
        Arenas,
        ArenaView,
        ArenaResults,
    ]
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": f"flyswat protocol {PROTOCOL_VERSION}",
        "client_message": _client_schema(),
        "server_message": TypeAdapter(cast(Any, ServerMessage)).json_schema(),
        "http": {m.__name__: m.model_json_schema() for m in http},
    }


def _client_schema() -> dict[str, Any]:
    """The client messages' JSON schema, as msgspec writes it (their union by ``type``)."""
    (union,), defs = msgspec.json.schema_components([_CLIENT_UNION], ref_template="#/$defs/{name}")
    return {**union, "$defs": defs}


def schema_text() -> str:
    """:func:`json_schema` as the exact text of docs/protocol.schema.json."""
    return json.dumps(json_schema(), indent=2, sort_keys=True) + "\n"


if __name__ == "__main__":  # pragma: no cover
    sys.stdout.write(schema_text())
