"""What a table is and what it may say: the narrow context its handlers are given.

A :class:`Context` holds one table's state — seats, connections, lobby, game, slap round,
timers — the one way that state changes (:meth:`Context.apply` of a stored event, and
:meth:`Context.emit`, which applies one and lists it for the store), and the outcome being
built: whom it tells what (:meth:`~Context.send`, :meth:`~Context.tell_all`,
:meth:`~Context.tell_everyone`, …). It takes no commands and imports none of the modules that
handle them: :mod:`~flyswat.table.turns`, :mod:`~flyswat.table.lifecycle`,
:mod:`~flyswat.table.sessions` and :mod:`~flyswat.table.reactions` are functions of a
:class:`Context`, and :class:`flyswat.table.core.Table` (commands in) is built on it and
imports them: the package's imports run one way.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel

from flyswat import bots
from flyswat import protocol as p
from flyswat.arbiter import RoundClock
from flyswat.cards import Card
from flyswat.engine import Game
from flyswat.errors import IllegalActionError, MalformedError
from flyswat.players.identity import valid_id
from flyswat.players.ratings import BOT_RATINGS
from flyswat.rules import Rules
from flyswat.shuffle import commitment
from flyswat.table import events as ev
from flyswat.table.io import BETWEEN, Close, Fanout, Outcome, Send, Sources
from flyswat.table.seats import Audience, Conn, Seat
from flyswat.view import view_json
from flyswat.wire import Deltas, private_of

#: A lobby with nobody connected expires after this long (ms).
LOBBY_TTL_MS = 30 * 60_000.0
#: A joined lobby seat whose holder is away this long is given up (ms), by default.
SEAT_TTL_MS = 120_000.0
#: The most spectators a table alone takes (the server shares one cap among a node's tables:
#: :class:`~flyswat.table.seats.Audience`).
MAX_SPECTATORS = 50

#: Spectators are told the hands laid at most this often (ms): each message to them is one
#: write per spectator, thousands for a featured game; the players' ``hands`` still go out
#: every 100 ms, and a round's result and the next reveal go to everyone at once.
WATCH_HANDS_MS = 500.0

State = Literal["lobby", "playing", "over", "expired"]


def check_options(options: p.TableOptions) -> Rules:
    """The game's rules for ``options``; raises :class:`MalformedError` for bad options."""
    rules = Rules(options.seats, options.remove, options.slap_window_ms)
    bot_seats = [b.seat for b in options.bots]
    if len(set(bot_seats)) != len(bot_seats) or any(s >= options.seats for s in bot_seats):
        raise MalformedError("bot seats must be distinct seats of the table", "bad_options")
    if len(bot_seats) >= options.seats:
        raise MalformedError("at least one seat must be human: the host's", "bad_options")
    for b in options.bots:
        bots.params(b.level)
    if options.start is not None and options.start >= options.seats:
        raise MalformedError("the start seat must be a seat of the table", "bad_options")
    if not all(valid_id(i) for i in options.invite) or len(set(options.invite)) < len(
        options.invite
    ):
        raise MalformedError("invite lists distinct bot account ids", "bad_options")
    if options.reserved is not None and not valid_id(options.reserved):
        raise MalformedError("reserved is a player's id", "bad_options")
    return rules


class Context:
    """One table's state and outputs, without its commands (those are
    :class:`flyswat.table.core.Table`'s): what a handler may read, change by an event, and
    tell."""

    def __init__(
        self,
        code: str,
        created: ev.Created,
        sources: Sources,
        *,
        bot_pace: float = 1.0,
        audience: Audience | None = None,
        lobby_ttl_ms: float = LOBBY_TTL_MS,
        seat_ttl_ms: float = SEAT_TTL_MS,
    ) -> None:
        """``bot_pace`` scales the bots' pauses before revealing; ``audience`` counts the
        spectators of the node's tables against the node's cap (by default, one of the
        table's own taking :data:`MAX_SPECTATORS`); a lobby nobody is connected to expires after
        ``lobby_ttl_ms``; a joined seat (not the host's) whose holder has not been connected
        for ``seat_ttl_ms`` in the lobby is given up."""
        self.code = code
        self.options = created.options
        self.rules = check_options(created.options)
        self.host = created.host
        self.sources = sources
        self.bot_pace = bot_pace
        self.audience = audience if audience is not None else Audience(MAX_SPECTATORS)
        self.lobby_ttl_ms = lobby_ttl_ms
        self.seat_ttl_ms = seat_ttl_ms
        levels = {b.seat: b.level for b in created.options.bots}
        self.seats = [
            Seat(i, "bot", levels[i], f"Bot {i + 1}") if i in levels else Seat(i, "human")
            for i in range(created.options.seats)
        ]
        self.conns: dict[int, Conn] = {}  # every connection after its hello
        self.watchers: dict[int, Conn] = {}  # those of them that watch (no seat)
        self.strangers: dict[int, Conn] = {}  # connections that spoke before their hello
        self.state: State = "lobby"
        self.game: Game | None = None
        self.game_id: str | None = None
        self.started_at = ""
        self.record: str | None = None  # the finished game's record, as JSON text
        self.clock: RoundClock | None = None
        self.bot_plans: list[tuple[float, int, Card, int, bool]] = []
        self.turn_due: float | None = None
        self.hands_due: float | None = None  # when the coalesced hand counts go out
        self.idle_since: float | None = None
        self.fill_due: float | None = None  # a Play now lobby: when bots take the free seats
        self.games_played = 0  # games put away by a rematch
        self.now = 0.0  # the time of the command being handled
        self.deltas = Deltas()  # what the seats' connections were last told (protocol 3)
        self.watch_deltas = Deltas()  # what the spectators were last told
        self.watch_hands_at = -WATCH_HANDS_MS  # when they were last told the hands
        self.watch_due: float | None = None  # when the hands held back from them go out
        self.out = Outcome()

    # -- the one way the state changes -----------------------------------------------------

    def apply(self, event: ev.Event) -> None:
        """Change the table by one stored event: the only way its state changes."""
        game = self.game
        match event:
            case ev.Joined(seat=seat, name=name, token_hash=hashed):
                self.seats[seat].name, self.seats[seat].token_hash = name, hashed
                self.seats[seat].player, self.seats[seat].rating = event.player, event.rating
                self.seats[seat].bot_account = event.bot
            case ev.Released(seat=seat):
                gone = self.seats[seat]
                gone.name, gone.token_hash, gone.ready, gone.away_since = None, None, False, None
                gone.player = gone.rating = None
                gone.bot_account = False
            case ev.ReadySet(seat=seat, ready=ready):
                self.seats[seat].ready = ready
            case ev.Started():
                self.game = Game.new(self.rules, event.seed, event.start)
                self.game_id, self.started_at = event.game_id, event.started_at
                self.state = "playing"
            case ev.Revealed(card=card) if game is not None:
                if game.reveal().card.text != card:
                    raise MalformedError(f"table {self.code}: replay diverged at {event}")
                self.seats[event.seat].reveals += 0 if event.auto else 1
            case ev.Slapped(seat=seat, card=card, ms=ms) if game is not None:
                game.slap(seat, Card.parse(card), ms)
                if event.done:
                    game.done(seat)
            case ev.SaidDone(seat=seat) if game is not None:
                game.done(seat)
            case ev.Away(seat=seat) if game is not None:
                game.away(seat)
            case ev.Back(seat=seat) if game is not None:
                game.back(seat)
            case ev.TooFast(seat=seat):
                self.seats[seat].too_fast += 1
            case ev.Closed() if game is not None:
                game.close_round()
                self.clock, self.bot_plans = None, []
            case ev.LegacyRound(slaps=slaps) if game is not None:
                for s in slaps:
                    game.slap(s.seat, Card.parse(s.card), s.ms)
                game.close_round(by_time=False)
            case ev.Over(record=record):
                self.state, self.record = "over", record
                self.turn_due = None
            case ev.Expired():
                self.state, self.idle_since = "expired", None
            case ev.RematchSet(seat=seat, accept=accept):
                self.seats[seat].rematch = accept
            case ev.Reset():
                self.state, self.game, self.game_id, self.record = "lobby", None, None, None
                self.clock, self.bot_plans, self.turn_due = None, [], None
                self.games_played += 1
                for fresh in self.seats:
                    fresh.too_fast, fresh.rematch, fresh.reveals = 0, False, 0
            case ev.Left(seat=seat, host=host):
                self._free(seat)
                self.host = host
            case ev.Kicked(seat=seat):
                self._free(seat)
            case ev.SeatToBot(seat=seat, level=level):
                bot = self.seats[seat]
                bot.kind, bot.level, bot.name = "bot", level, f"Bot {seat + 1}"
                bot.token_hash, bot.player, bot.rating, bot.ready = None, None, None, True
                bot.away_since, bot.bot_account = None, False
            case ev.Created():
                raise MalformedError(f"table {self.code}: a second create event")
            case _:
                raise MalformedError(f"table {self.code}: {event.kind} before the game started")

    def _free(self, seat: int) -> None:
        s = self.seats[seat]
        s.name, s.token_hash, s.player, s.rating = None, None, None, None
        s.ready, s.rematch, s.away_since, s.bot_account = False, False, None, False

    # -- the outcome being built -----------------------------------------------------------

    def outcome(self) -> Outcome:
        """The outcome of the command being handled; between two commands (``BETWEEN``)
        nothing may be added to one: an error."""
        out = self.out
        if out is BETWEEN:
            raise RuntimeError("a table's event or message outside a command")
        return out

    def emit(self, event: ev.Event) -> None:
        """Apply ``event`` and list it for the store: nothing changes that is not stored."""
        out = self.outcome()
        self.apply(event)
        out.events.append(event)

    def send(self, conn: int, message: BaseModel | bytes, mark: int | None = None) -> None:
        self.outcome().sends.append(Send(conn, message, mark))

    def fan_out(self, message: BaseModel | bytes) -> None:
        """One message to every spectator: one effect, encoded once for all of them."""
        self.outcome().sends.append(Fanout(tuple(self.watchers), message))

    def close(self, conn: int, code: int, reason: str) -> None:
        """Close connection ``conn`` with ``code`` after what was sent to it."""
        self.outcome().closes.append(Close(conn, code, reason))

    def tell_everyone(self, message: BaseModel) -> None:
        """One message to every connection, seated or watching."""
        for conn, _ in self.seated():
            self.send(conn, message)
        if self.watchers:
            self.fan_out(message)

    def seated(self) -> list[tuple[int, int]]:
        """``(connection, seat)`` of every seat whose socket has said hello."""
        conns = self.conns
        return [(s.conn, s.index) for s in self.seats if s.conn is not None and s.conn in conns]

    def broadcast(self, build: Any, mark: int | None = None) -> None:
        """``build(view)`` for each receiving seat's whole view, to every connection (one
        step); the views sent become what later deltas are taken against."""
        seated = self.seated()
        for conn, seat in seated:
            self.send(conn, build(self.view_of(seat)), mark)
        if self.watchers:
            self.fan_out(build(self.view_of(None)))
        game = self.game
        if game is not None:
            self.deltas.reset(self.view_of(None))
            self.watch_deltas.reset(self.view_of(None))
            self.watch_due = None
            for _, seat in seated:
                self.deltas.sent_whole(seat, private_of(game, seat))

    def tell_all(self, head: dict[str, Any], mark: int | None = None) -> None:
        """A message whose own fields are ``head``, with what changed of each receiver's
        view (:mod:`flyswat.wire`), to every connection in one step. It carries every change
        so far: coalesced hand counts still to go out are in it. The spectators get one
        message for all of them (:meth:`fan_out`), against what they were last told: their
        ``hands`` at most every :data:`WATCH_HANDS_MS`."""
        game = self.game
        if game is None:
            return
        self.hands_due = None
        public = self.view_of(None)
        seated = self.seated()
        privates = {seat: private_of(game, seat) for _, seat in seated}
        sent = self.deltas.message(head, public, [seat for _, seat in seated], privates)
        for (conn, _), data in zip(seated, sent, strict=True):
            self.send(conn, data, mark)
        if self.watchers:
            self.tell_watchers(head, public)

    def tell_watchers(self, head: dict[str, Any], public: dict[str, Any]) -> None:
        """``head`` with what changed since the spectators were last told, to all of them;
        a ``hands`` sooner than :data:`WATCH_HANDS_MS` after the last is held back until
        then (or until the next message, which carries it)."""
        if head["type"] == "hands":
            if self.now < self.watch_hands_at + WATCH_HANDS_MS:
                self.watch_due = self.watch_hands_at + WATCH_HANDS_MS
                return
            self.watch_hands_at = self.now
        self.watch_due = None
        self.fan_out(self.watch_deltas.message(head, public, [None], {})[0])

    def table_update(self) -> None:
        self.tell_everyone(p.TableUpdate(table=self.info()))

    # -- what everyone sees ----------------------------------------------------------------

    def info(self, now: float | None = None) -> p.TableInfo:
        """The table's public state (at ``now``, by default the last command's time)."""
        game = self.game
        over = self.state == "over" and game is not None
        return p.TableInfo(
            code=self.code,
            state="over" if self.state == "expired" else self.state,
            options=self.options,
            players=[
                p.PlayerInfo(
                    seat=s.index,
                    kind=s.kind,
                    name=s.name,
                    level=s.level,
                    joined=s.joined,
                    ready=s.ready or s.is_bot,
                    connected=s.connected,
                    host=s.index == self.host,
                    too_fast=s.too_fast,
                    player=s.player,
                    rating=self.rating_of(s.index),
                    rematch=s.rematch or (s.is_bot and self.state == "over"),
                    bot_account=s.bot_account,
                )
                for s in self.seats
            ],
            spectators=len(self.watchers),
            game_id=self.game_id,
            commitment=commitment(game.seed) if game and game.seed else None,
            seed=str(game.seed) if over and game else None,
            record_url=f"/api/tables/{self.code}/record" if over else None,
            fill_in_ms=self.fill_in_ms(self.now if now is None else now),
            games=self.games_played + (1 if over else 0),
        )

    def view_of(self, seat: int | None) -> Any:
        """``seat``'s view of the game (None before the start): the only game data sent."""
        return view_json(self.game, seat) if self.game is not None else None

    def rating_of(self, seat: int) -> int | None:
        """The shown rating of a seat: its player's when they sat down, a bot's level's."""
        s = self.seats[seat]
        if s.is_bot:
            r = BOT_RATINGS.get(str(s.level))
            return r.shown if r is not None else None
        return s.rating

    def fill_in_ms(self, now: float) -> int | None:
        """ms left at ``now`` before the bots take the free seats (a Play now lobby), or
        None."""
        if self.state != "lobby" or self.fill_due is None:
            return None
        return max(0, round(self.fill_due - now))

    # -- the game --------------------------------------------------------------------------

    def running(self) -> Game:
        if self.game is None or self.state in ("lobby", "expired"):
            raise IllegalActionError("the game has not started", "not_started")
        if self.state == "over":
            raise IllegalActionError("the game is over", "game_over")
        return self.game

    def turn_left(self, now: float) -> int | None:
        """ms left of the turn timeout at ``now``, if a human is to move."""
        game = self.game
        if self.turn_due is None or game is None or self.seats[game.to_move].is_bot:
            return None
        return max(0, round(self.turn_due - now))

    def upcoming_turn_ms(self) -> int | None:
        """The turn timeout about to start, if the next move is a human's."""
        game = self.game
        if game is None or game.over or game.round is not None or self.state != "playing":
            return None
        return None if self.seats[game.to_move].is_bot else self.options.turn_timeout_ms
