"""A table, sans I/O: commands in, effects out (see :mod:`flyswat.table.io`).

One :class:`Table` holds one table's seats, connections, lobby, game and slap round. It
never reads a clock, sleeps, touches a socket or a database: :meth:`Table.handle` takes a
command and ``now`` and returns an :class:`~flyswat.table.io.Outcome`. Every change of its
state goes through :meth:`Table.apply` of a stored event (:mod:`flyswat.table.events`), so
rebuilding a table after a crash (:meth:`Table.restore`) runs the same code as play did.

Each action is checked in full first — raising :class:`~flyswat.errors.FlyswatError` (with a
code) changes nothing — then its events are emitted (applied, and listed for the store), then
its messages are listed. The runner stores the events before it delivers any message.

Timers are one wake-up time (:attr:`Table.wake_at`): the turn timeout (a human's, after which
the server reveals for them) or a bot's pause before revealing, a bot's planned slap, the
moment a slap round can be decided (:class:`~flyswat.arbiter.RoundClock`), a lobby's expiry.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel

from flyswat import bots
from flyswat import protocol as p
from flyswat.arbiter import RoundClock
from flyswat.cards import Card
from flyswat.engine import Game
from flyswat.errors import LATE, FlyswatError, IllegalActionError, MalformedError
from flyswat.players.identity import valid_id
from flyswat.rules import Rules
from flyswat.shuffle import commitment
from flyswat.table import events as ev
from flyswat.table import lifecycle, reactions, sessions, turns
from flyswat.table.io import (
    Command,
    Fanout,
    Gone,
    Join,
    Message,
    Outcome,
    Rtt,
    Send,
    Sent,
    Sources,
    StartBy,
    Tick,
)
from flyswat.table.seats import Audience, Conn, Seat, clean_name, seat_token, token_hash
from flyswat.table.sessions import CLOSE_POLICY
from flyswat.view import view
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


class Table:
    """One table. Build it with :meth:`create` or :meth:`restore`; drive it with
    :meth:`handle`."""

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
        self.record: dict[str, Any] | None = None
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

    # -- building ------------------------------------------------------------------------

    @classmethod
    def create(
        cls, code: str, options: p.TableOptions, host_name: str, sources: Sources, now: float,
        *, player: str | None = None, rating: int | None = None, key: str | None = None,
        bot: bool = False, **kw: Any,
    ) -> tuple[Table, Outcome]:  # fmt: skip
        """A new table whose host takes the first human seat; the outcome's ``reply`` is
        ``(seat, token)``; the token is derived from ``key`` when given (as a
        :class:`~flyswat.table.io.Join`'s); ``bot``: the host is a bot account. Raises
        ``bad_options``, ``bad_rules``, ``bad_level``, ``bad_name``, ``bots_not_allowed``."""
        check_options(options)
        if bot and not options.bot_accounts:
            raise IllegalActionError(
                "a bot account hosts only tables that take bot accounts", "bots_not_allowed"
            )
        name = clean_name(host_name)
        host = next(s for s in range(options.seats) if s not in {b.seat for b in options.bots})
        created = ev.Created(options=options, host=host, created_at=sources.wall())
        table = cls(code, created, sources, **kw)
        table.idle_since = table.now = now
        out = table._begin()
        out.events.append(created)
        token = seat_token(key, code) if key is not None else sources.token()
        table.emit(ev.Joined(seat=host, name=name, token_hash=token_hash(token), player=player,
                             rating=rating, bot=bot))  # fmt: skip
        lifecycle.arm(table, now)
        out.reply = (host, token)
        return table, table._end()

    @classmethod
    def restore(
        cls, code: str, events: list[ev.Event], sources: Sources, now: float, **kw: Any
    ) -> tuple[Table, Outcome]:
        """Rebuild a table by applying its stored events, then resume its timers at ``now``: a
        round that was open resumes with its accepted hands and a fresh window for every
        seat still to complete it. The outcome holds what resuming stored (a game that ended
        before its ``over`` was stored ends now). Raises :class:`MalformedError` for a log
        that is not one."""
        first = events[0] if events else None
        if not isinstance(first, ev.Created):
            raise MalformedError(f"table {code}: the first event is not create")
        table = cls(code, first, sources, **kw)
        for event in events[1:]:
            table.apply(event)
        table.idle_since = table.now = now
        table._begin()
        lifecycle.arm(table, now)
        if table.state == "playing" and table.game is not None:
            if table.game.over:
                turns.finish(table)
            elif table.game.round is not None:
                turns.open_round(table, now, everyone=True)
            else:
                turns.schedule_turn(table, now)
        return table, table._end()

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
            case ev.SaidDone(seat=seat) if game is not None:
                game.done(seat)
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
            case ev.RematchSet() | ev.Reset() | ev.Left() | ev.Kicked() | ev.SeatToBot():
                lifecycle.apply(self, event)
            case ev.Created():
                raise MalformedError(f"table {self.code}: a second create event")
            case _:
                raise MalformedError(f"table {self.code}: {event.kind} before the game started")

    # -- one command ---------------------------------------------------------------------

    def handle(self, command: Command, now: float) -> Outcome:
        """Carry out one command at ``now``; what to store and to tell. A refused HTTP command
        raises :class:`FlyswatError` and changes nothing; a refused message is answered with
        an ``error`` to its connection."""
        self._begin()
        self.now = now
        match command:
            case Message(conn=conn_id):
                self._message(command, now)
            case Gone(conn=conn_id):
                sessions.gone(self, conn_id, now)
            case Rtt():
                self.observe(command, now)
            case Sent(conn=conn_id, turn=turn):
                self.delivered(conn_id, turn, now)
            case Join():
                self.out.reply = self._join(command, now)
            case StartBy(token=token):
                seat = next((s.index for s in self.seats if s.holds(token)), None)
                if seat is None:
                    raise IllegalActionError("no seat at this table has that token", "bad_token")
                self._start(seat, now)
            case Tick():
                turns.tick(self, now)
                lifecycle.tick(self, now)
                self._release_away(now)
                idle = self.idle_since
                if self.state == "lobby" and idle is not None and now >= idle + self.lobby_ttl_ms:
                    self.emit(ev.Expired())
        return self._end()

    def observe(self, rtt: Rtt, now: float) -> None:
        """A connection's round trip at ``now``, for its seat's arbitration: nothing is
        stored, told or woken for (the runner's shortcut past :meth:`handle`)."""
        conn = self.conns.get(rtt.conn)
        if conn is not None and conn.seat is not None:
            link = self.seats[conn.seat].link
            if rtt.ms is not None:
                link.pong(rtt.ms, now)
            if rtt.network_ms is not None:
                link.network_rtt(rtt.network_ms, now)

    def delivered(self, conn_id: int, turn: int, now: float) -> None:
        """The trigger of turn ``turn`` was handed to connection ``conn_id``'s socket at
        ``now``: its seat's clock of the round starts (nothing is stored or told: the
        runner's shortcut past :meth:`handle`, which does the same for a :class:`Sent`)."""
        conn = self.conns.get(conn_id)
        game = self.game
        if conn and conn.seat is not None and self.clock and game and turn == len(game.turns):
            self.clock.delivered(conn.seat, now)

    @property
    def wake_at(self) -> float | None:
        """When the table must be handed a :class:`Tick`, or None."""
        if self.state == "playing" and not self.bot_plans:  # the common case, without lists
            soonest = self.turn_due
            for t in (self.hands_due, self.watch_due, turns.round_deadline(self)):
                if t is not None and (soonest is None or t < soonest):
                    soonest = t
            return soonest
        due = [self.turn_due, self.hands_due, self.watch_due, turns.round_deadline(self)]
        if self.bot_plans:
            due.append(self.bot_plans[0][0])
        if self.state == "lobby":
            due.append(lifecycle.wake_at(self))
            if self.idle_since is not None:
                due.append(self.idle_since + self.lobby_ttl_ms)
            due += [s.away_since + self.seat_ttl_ms for s in self.seats
                    if s.away_since is not None and s.index != self.host]  # fmt: skip
        return min((t for t in due if t is not None), default=None)

    def let_go(self) -> None:
        """The table leaves this node (another runs it now): its spectators stop counting
        against the node's cap."""
        self.audience.release(len(self.watchers))
        self.watchers.clear()

    # -- the outcome being built -----------------------------------------------------------

    def _begin(self) -> Outcome:
        self.out = Outcome()
        return self.out

    def _end(self) -> Outcome:
        out, self.out = self.out, Outcome()
        return out

    def emit(self, event: ev.Event) -> None:
        """Apply ``event`` and list it for the store: nothing changes that is not stored."""
        self.apply(event)
        self.out.events.append(event)

    def send(self, conn: int, message: BaseModel | bytes, mark: int | None = None) -> None:
        self.out.sends.append(Send(conn, message, mark))

    def fan_out(self, message: BaseModel | bytes) -> None:
        """One message to every spectator: one effect, encoded once for all of them."""
        self.out.sends.append(Fanout(tuple(self.watchers), message))

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
                    rating=lifecycle.rating_of(self, s.index),
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
            fill_in_ms=lifecycle.fill_in_ms(self, self.now if now is None else now),
            games=self.games_played + (1 if over else 0),
        )

    def view_of(self, seat: int | None) -> Any:
        """``seat``'s view of the game (None before the start): the only game data sent."""
        return view(self.game, seat).to_json() if self.game is not None else None

    def joinable(self) -> bool:
        """In the lobby with a human seat free."""
        return self.state == "lobby" and any(not s.joined for s in self.seats)

    def listed(self) -> bool:
        """Joinable, and public (a private table is reached by its link only)."""
        return self.options.public and self.joinable()

    def live(self) -> bool:
        """A public game being played: one for the Live now list."""
        return self.options.public and self.state == "playing"

    def listing_key(self) -> tuple[Any, ...]:
        """What :meth:`info` holds that can change while a game is played, cheap to take:
        the same key, the same info (a node's hundreds of live games are not made into
        infos every time it publishes its list)."""
        return (self.state, self.games_played, len(self.watchers), self.game_id, self.host,
                id(self.options),
                tuple((s.name, s.conn is None, s.too_fast, s.rating, s.player, s.ready,
                       s.rematch, s.bot_account, s.kind, s.level) for s in self.seats))  # fmt: skip

    def _turn_left(self, now: float) -> int | None:
        game = self.game
        if self.turn_due is None or game is None or self.seats[game.to_move].is_bot:
            return None
        return max(0, round(self.turn_due - now))

    def _upcoming_turn_ms(self) -> int | None:
        """The turn timeout about to start, if the next move is a human's."""
        game = self.game
        if game is None or game.over or game.round is not None or self.state != "playing":
            return None
        return None if self.seats[game.to_move].is_bot else self.options.turn_timeout_ms

    # -- connections -----------------------------------------------------------------------

    def _message(self, command: Message, now: float) -> None:
        conn = self.conns.get(command.conn)
        counted = conn or self.strangers.setdefault(command.conn, Conn(command.conn, None))
        refused = command.refused
        try:
            if refused is None:
                self._dispatch(conn, command, now)
        except FlyswatError as e:
            refused = (e.code, e.message)
        if refused is not None:
            self.send(command.conn, p.Error(code=refused[0], message=refused[1]))
            if refused[0] not in LATE and counted.erred(now):
                sessions.drop(self, counted.id, CLOSE_POLICY, "too many refused messages", now)

    def _dispatch(self, conn: Conn | None, command: Message, now: float) -> None:
        """One parsed message of a connection; raises :class:`FlyswatError` to refuse it."""
        msg = command.message
        if isinstance(msg, p.Hello):
            if conn is not None:
                raise IllegalActionError("hello was already said", "already_hello")
            sessions.hello(self, command.conn, msg.token, now)
            return
        if conn is None:
            raise IllegalActionError('send {"type": "hello"} first', "hello_first")
        seat = self.seats[conn.seat] if conn.seat is not None else None
        if not conn.bucket.take(now) or (seat is not None and not seat.bucket.take(now)):
            raise IllegalActionError("too many messages: slow down", "rate_limited")
        if isinstance(msg, p.Pong):
            return  # the runner measures pongs (Rtt)
        if seat is None:
            raise IllegalActionError("spectators watch; they cannot act", "spectator")
        claimed = getattr(msg, "seat", None)
        if claimed is not None and claimed != seat.index:
            raise IllegalActionError(
                f"you hold seat {seat.index}, not seat {claimed}", "not_your_seat"
            )
        self._act(seat.index, msg, now)

    def _act(self, seat: int, msg: BaseModel | None, now: float) -> None:
        if isinstance(msg, p.Ready):
            if self.state != "lobby":
                raise IllegalActionError("the game has already started", "already_started")
            if self.seats[seat].ready != msg.ready:
                self.emit(ev.ReadySet(seat=seat, ready=msg.ready))
                self.table_update()
        elif isinstance(msg, p.Start):
            self._start(seat, now)
        elif isinstance(msg, p.Reveal):
            turns.reveal(self, seat, now)
        elif isinstance(msg, p.Slap):
            turns.slap(self, seat, msg.card, msg.ms, msg.turn, now)
        elif isinstance(msg, p.Done):
            turns.done(self, seat, msg.turn, now)
        elif isinstance(msg, p.LIFECYCLE):
            lifecycle.act(self, seat, msg, now)
        elif isinstance(msg, p.React):
            reactions.react(self, seat, msg.reaction, now)

    # -- lobby -----------------------------------------------------------------------------

    def _release_away(self, now: float) -> None:
        """Give up the lobby seats whose holders have been away too long (not the host's:
        an unused lobby expires as a whole)."""
        if self.state != "lobby":
            return
        away = [s for s in self.seats if s.away_since is not None and s.index != self.host
                and now >= s.away_since + self.seat_ttl_ms]  # fmt: skip
        for seat in away:
            self.emit(ev.Released(seat=seat.index))
        if away:
            self.table_update()

    def _join(self, join: Join, now: float) -> tuple[int, str]:
        """``(seat, token)`` of a join: the seat it already holds, if it does (whatever the
        state but expired: a join that filled a Play now table started its game), or the
        next free seat of the lobby."""
        if self.state == "expired":
            raise IllegalActionError("this lobby was left unused and has closed", "expired")
        cleaned = clean_name(join.name)
        token = seat_token(join.key, self.code) if join.key is not None else None
        held = self._held(join.player, token)
        if held is not None:
            return held.index, self._token_again(held, token)
        if self.state != "lobby":
            raise IllegalActionError("the game has already started", "already_started")
        if join.bot:
            lifecycle.check_bot_account(self, join.player)
        if self.options.reserved is not None and join.player != self.options.reserved:
            raise IllegalActionError(
                "this table's free seat is kept for the player challenged", "seat_reserved"
            )
        free = next((s for s in self.seats if not s.joined), None)
        if free is None:
            raise IllegalActionError("every seat is taken", "table_full")
        token = token if token is not None else self.sources.token()
        self.emit(ev.Joined(seat=free.index, name=cleaned, token_hash=token_hash(token),
                            player=join.player, rating=join.rating, bot=join.bot))  # fmt: skip
        free.away_since = now  # until its holder connects
        self.idle_since = now if not self.conns else None
        self.table_update()
        lifecycle.joined(self, now)
        return free.index, token

    def _held(self, player: str | None, token: str | None) -> Seat | None:
        """The seat a join already holds: its player's (with an identity), or the anonymous
        seat that ``token`` (derived from the join's key) opens."""
        for s in self.seats:
            if s.is_bot or not s.joined:
                continue
            if player is not None and s.player == player:
                return s
            if player is None and token is not None and s.player is None and s.holds(token):
                return s
        return None

    def _token_again(self, seat: Seat, token: str | None) -> str:
        """The token of a seat joined again: the same one, storing nothing, when the key
        still derives it. Otherwise (the identity moved to another device since, with a new
        secret; a seat taken before tokens were derived) the seat's player is given a new
        token, stored, and the old one stops opening the seat."""
        if token is not None and seat.holds(token):
            return token
        token = token if token is not None else self.sources.token()
        self.emit(ev.Joined(seat=seat.index, name=str(seat.name), token_hash=token_hash(token),
                            player=seat.player, rating=seat.rating,
                            bot=seat.bot_account))  # fmt: skip
        return token

    def _start(self, seat: int, now: float) -> None:
        if self.state == "expired":
            raise IllegalActionError("this lobby was left unused and has closed", "expired")
        if self.state != "lobby":
            raise IllegalActionError("the game has already started", "already_started")
        if self.fill_due is not None:  # Play now: a player alone there need not wait
            lifecycle.start_now(self, seat, now)
            return
        if seat != self.host:
            raise IllegalActionError("only the host can start the game", "not_host")
        if not all(s.joined for s in self.seats):
            raise IllegalActionError("every seat must be taken first", "not_full")
        waiting = [str(s.name) for s in self.seats if not (s.ready or s.is_bot or s.index == seat)]
        if waiting:
            raise IllegalActionError(f"not ready yet: {', '.join(waiting)}", "not_ready")
        self.begin_game(now)

    def begin_game(self, now: float) -> None:
        """Start the game (checked by the caller: the host's start, a rematch, Play now)."""
        self.fill_due = None
        start = self.options.start
        self.emit(ev.Started(
            game_id=self.sources.game_id(), seed=self.sources.seed(),
            start=start if start is not None else self.sources.rng.randrange(self.options.seats),
            started_at=self.sources.wall(),
        ))  # fmt: skip
        info, game = self.info(), self.running()
        upcoming = self._upcoming_turn_ms()
        self.broadcast(lambda v: p.Started(
            commitment=info.commitment or "", start=game.start, table=info, view=v,
            turn_deadline_ms=upcoming,
        ))  # fmt: skip
        turns.schedule_turn(self, now)

    # -- turns -----------------------------------------------------------------------------

    def running(self) -> Game:
        if self.game is None or self.state in ("lobby", "expired"):
            raise IllegalActionError("the game has not started", "not_started")
        if self.state == "over":
            raise IllegalActionError("the game is over", "game_over")
        return self.game
