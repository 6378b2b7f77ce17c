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

import contextlib
from typing import Any, Literal

from pydantic import BaseModel

from flyswat import bots
from flyswat import protocol as p
from flyswat.arbiter import MIN_HUMAN_MS, RoundClock
from flyswat.cards import Card
from flyswat.engine import Game
from flyswat.errors import FlyswatError, IllegalActionError, MalformedError
from flyswat.record import to_record
from flyswat.rules import Rules
from flyswat.shuffle import commitment
from flyswat.table import events as ev
from flyswat.table.io import (
    Close,
    Command,
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
from flyswat.table.seats import Conn, Seat, clean_name, token_hash
from flyswat.view import view

#: The most spectators one table takes.
MAX_SPECTATORS = 50
#: A lobby with nobody connected expires after this long (ms).
LOBBY_TTL_MS = 30 * 60_000.0
#: WebSocket close codes the table asks for.
CLOSE_REPLACED = 4409
CLOSE_POLICY = 1008
CLOSE_FULL = 1013

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
    return rules


class Table:
    """One table. Build it with :meth:`create` or :meth:`restore`; drive it with
    :meth:`handle`."""

    def __init__(
        self, code: str, created: ev.Created, sources: Sources, *, bot_pace: float = 1.0
    ) -> None:
        self.code = code
        self.options = created.options
        self.rules = check_options(created.options)
        self.host = created.host
        self.sources = sources
        self.bot_pace = bot_pace
        levels = {b.seat: b.level for b in created.options.bots}
        self.seats = [
            Seat(i, "bot", levels[i], f"Bot {i + 1}") if i in levels else Seat(i, "human")
            for i in range(created.options.seats)
        ]
        self.conns: dict[int, Conn] = {}
        self.strangers: dict[int, Conn] = {}  # connections that spoke before their hello
        self.state: State = "lobby"
        self.game: Game | None = None
        self.game_id: str | None = None
        self.started_at = ""
        self.record: dict[str, Any] | None = None
        self.clock: RoundClock | None = None
        self.bot_plans: list[tuple[float, int, Card, int, bool]] = []
        self.turn_due: float | None = None
        self.idle_since: float | None = None
        self._out = Outcome()

    # -- building ------------------------------------------------------------------------

    @classmethod
    def create(
        cls, code: str, options: p.TableOptions, host_name: str, sources: Sources, now: float,
        **kw: Any,
    ) -> tuple[Table, Outcome]:  # fmt: skip
        """A new table whose host takes the first human seat; the outcome's ``reply`` is
        ``(seat, token)``. Raises ``bad_options``, ``bad_rules``, ``bad_level``, ``bad_name``."""
        check_options(options)
        name = clean_name(host_name)
        host = next(s for s in range(options.seats) if s not in {b.seat for b in options.bots})
        created = ev.Created(options=options, host=host, created_at=sources.wall())
        table = cls(code, created, sources, **kw)
        table.idle_since = now
        out = table._begin()
        out.events.append(created)
        token = sources.token()
        table._emit(ev.Joined(seat=host, name=name, token_hash=token_hash(token)))
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
        table.idle_since = now
        table._begin()
        if table.state == "playing" and table.game is not None:
            if table.game.over:
                table._finish()
            elif table.game.round is not None:
                table._open_round(now, everyone=True)
            else:
                table._schedule_turn(now)
        return table, table._end()

    def apply(self, event: ev.Event) -> None:
        """Change the table by one stored event: the only way its state changes."""
        game = self.game
        match event:
            case ev.Joined(seat=seat, name=name, token_hash=hashed):
                self.seats[seat].name, self.seats[seat].token_hash = name, hashed
            case ev.ReadySet(seat=seat, ready=ready):
                self.seats[seat].ready = ready
            case ev.Started():
                self.game = Game.new(self.rules, event.seed, event.start)
                self.game_id, self.started_at = event.game_id, event.started_at
                self.state = "playing"
            case ev.Revealed(card=card) if game is not None:
                if game.reveal().card.text != card:
                    raise MalformedError(f"table {self.code}: replay diverged at {event}")
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
        match command:
            case Message(conn=conn_id):
                self._message(command, now)
            case Gone(conn=conn_id):
                self._gone(conn_id, now)
            case Rtt(conn=conn_id, ms=ms):
                conn = self.conns.get(conn_id)
                if conn is not None and conn.seat is not None and ms is not None:
                    self.seats[conn.seat].rtt.add(ms)
            case Sent(conn=conn_id, turn=turn):
                conn = self.conns.get(conn_id)
                game = self.game
                if (
                    conn
                    and conn.seat is not None
                    and self.clock
                    and game
                    and turn == len(game.turns)
                ):
                    self.clock.delivered(conn.seat, now)
            case Join(name=name):
                self._out.reply = self._join(name, now)
            case StartBy(token=token):
                seat = next((s.index for s in self.seats if s.holds(token)), None)
                if seat is None:
                    raise IllegalActionError("no seat at this table has that token", "bad_token")
                self._start(seat, now)
            case Tick():
                self._tick(now)
        return self._end()

    @property
    def wake_at(self) -> float | None:
        """When the table must be handed a :class:`Tick`, or None."""
        times = [t for t in (self.turn_due, self._round_deadline()) if t is not None]
        times += [at for at, *_ in self.bot_plans[:1]]
        if self.state == "lobby" and self.idle_since is not None:
            times.append(self.idle_since + LOBBY_TTL_MS)
        return min(times) if times else None

    # -- the outcome being built -----------------------------------------------------------

    def _begin(self) -> Outcome:
        self._out = Outcome()
        return self._out

    def _end(self) -> Outcome:
        out, self._out = self._out, Outcome()
        return out

    def _emit(self, event: ev.Event) -> None:
        """Apply ``event`` and list it for the store: nothing changes that is not stored."""
        self.apply(event)
        self._out.events.append(event)

    def _send(self, conn: int, message: BaseModel, mark: int | None = None) -> None:
        self._out.sends.append(Send(conn, message, mark))

    def _broadcast(self, build: Any, mark: int | None = None) -> None:
        """``build(view)`` for each receiving seat's view, to every connection (one step)."""
        built: dict[int | None, BaseModel] = {}
        for conn in self.conns.values():
            if conn.seat not in built:
                built[conn.seat] = build(self.view_of(conn.seat))
            self._send(conn.id, built[conn.seat], mark if conn.seat is not None else None)

    def _table_update(self) -> None:
        msg = p.TableUpdate(table=self.info())
        for conn in self.conns:
            self._send(conn, msg)

    # -- what everyone sees ----------------------------------------------------------------

    def info(self) -> p.TableInfo:
        """The table's public state."""
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
                )
                for s in self.seats
            ],
            spectators=sum(1 for c in self.conns.values() if c.seat is None),
            game_id=self.game_id,
            commitment=commitment(game.seed) if game and game.seed else None,
            seed=str(game.seed) if over and game else None,
            record_url=f"/api/tables/{self.code}/record" if over else None,
        )

    def view_of(self, seat: int | None) -> Any:
        """``seat``'s view of the game (None before the start): the only game data sent."""
        return view(self.game, seat).to_json() if self.game is not None else None

    def joinable(self) -> bool:
        """In the lobby with a human seat free."""
        return self.state == "lobby" and any(not s.joined for s in self.seats)

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
        try:
            if command.error is not None:
                raise command.error
            msg = command.message
            if isinstance(msg, p.Hello):
                if conn is not None:
                    raise IllegalActionError("hello was already said", "already_hello")
                self._hello(command.conn, msg.token, now)
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
        except FlyswatError as e:
            self._send(command.conn, p.Error(code=e.code, message=e.message))
            if counted.erred(now):
                self._drop(counted.id, CLOSE_POLICY, "too many refused messages", now)

    def _act(self, seat: int, msg: BaseModel | None, now: float) -> None:
        if isinstance(msg, p.Ready):
            if self.state != "lobby":
                raise IllegalActionError("the game has already started", "already_started")
            if self.seats[seat].ready != msg.ready:
                self._emit(ev.ReadySet(seat=seat, ready=msg.ready))
                self._table_update()
        elif isinstance(msg, p.Start):
            self._start(seat, now)
        elif isinstance(msg, p.Reveal):
            self._reveal(seat, now)
        elif isinstance(msg, p.Slap):
            self._slap(seat, msg.card, msg.ms, msg.turn, now)
        elif isinstance(msg, p.Done):
            self._done(seat, msg.turn, now)

    def _hello(self, conn_id: int, token: str | None, now: float) -> None:
        if token is None:
            if sum(1 for c in self.conns.values() if c.seat is None) >= MAX_SPECTATORS:
                full = p.Error(code="spectators_full", message="this table has no room to watch")
                self._send(conn_id, full)
                self._out.closes.append(Close(conn_id, CLOSE_FULL, "spectators_full"))
                return
            seat = None
        else:
            found = next((s for s in self.seats if s.holds(token)), None)
            if found is None:
                raise IllegalActionError("no seat at this table has that token", "bad_token")
            if not found.bucket.take(now):
                raise IllegalActionError("too many messages: slow down", "rate_limited")
            old, found.conn, seat = found.conn, conn_id, found.index
            if old is not None:  # one live socket per seat: the new one takes it over
                why = p.Error(code="replaced", message="this seat was opened on another connection")
                self._drop(old, CLOSE_REPLACED, "replaced", now, error=why)
        self.strangers.pop(conn_id, None)
        self.conns[conn_id] = Conn(conn_id, seat)
        self.idle_since = None
        self._send(conn_id, p.Welcome(
            seat=seat, table=self.info(), view=self.view_of(seat),
            window_left_ms=self.clock.window_left(now) if self.clock else None,
            turn_deadline_ms=self._turn_left(now),
        ))  # fmt: skip
        game = self.game
        if game is not None and game.round is not None and seat is not None:
            turn = len(game.turns)
            for s in game.round.slaps:
                if s.seat == seat:
                    self._send(
                        conn_id, p.Accepted(turn=turn, card=s.card.text, ms=round(s.ms or 0))
                    )
            self._send(conn_id, p.Hands(turn=turn, view=self.view_of(seat)))
        self._table_update()

    def _drop(
        self, conn_id: int, code: int, reason: str, now: float, error: p.Error | None = None
    ) -> None:
        """Close ``conn_id`` (after ``error``, if given) and forget it."""
        if error is not None:
            self._send(conn_id, error)
        self._out.closes.append(Close(conn_id, code, reason))
        self._forget(conn_id, now)

    def _gone(self, conn_id: int, now: float) -> None:
        self.strangers.pop(conn_id, None)
        if conn_id in self.conns:
            self._forget(conn_id, now)
            self._table_update()

    def _forget(self, conn_id: int, now: float) -> None:
        """``conn_id`` is no more; a seat left with no connection during a round is not
        waited for."""
        self.strangers.pop(conn_id, None)
        conn = self.conns.pop(conn_id, None)
        if not self.conns:
            self.idle_since = now
        if conn is None or conn.seat is None or self.seats[conn.seat].conn != conn_id:
            return
        seat = self.seats[conn.seat]
        seat.conn = None
        game, clock = self.game, self.clock
        waited = game and game.round and clock and clock.waits_for(seat.index)
        if waited and game is not None and not game.seat_complete(seat.index):
            self._emit(ev.SaidDone(turn=len(game.turns), seat=seat.index))
            self._maybe_close(now)

    # -- lobby -----------------------------------------------------------------------------

    def _join(self, name: str, now: float) -> tuple[int, str]:
        if self.state == "expired":
            raise IllegalActionError("this lobby was left unused and has closed", "expired")
        if self.state != "lobby":
            raise IllegalActionError("the game has already started", "already_started")
        cleaned = clean_name(name)
        free = next((s for s in self.seats if not s.joined), None)
        if free is None:
            raise IllegalActionError("every seat is taken", "table_full")
        token = self.sources.token()
        self._emit(ev.Joined(seat=free.index, name=cleaned, token_hash=token_hash(token)))
        self.idle_since = now if not self.conns else None
        self._table_update()
        return free.index, token

    def _start(self, seat: int, now: float) -> None:
        if self.state == "expired":
            raise IllegalActionError("this lobby was left unused and has closed", "expired")
        if self.state != "lobby":
            raise IllegalActionError("the game has already started", "already_started")
        if seat != self.host:
            raise IllegalActionError("only the host can start the game", "not_host")
        if not all(s.joined for s in self.seats):
            raise IllegalActionError("every seat must be taken first", "not_full")
        waiting = [str(s.name) for s in self.seats if not (s.ready or s.is_bot or s.index == seat)]
        if waiting:
            raise IllegalActionError(f"not ready yet: {', '.join(waiting)}", "not_ready")
        start = self.options.start
        self._emit(ev.Started(
            game_id=self.sources.game_id(), seed=self.sources.seed(),
            start=start if start is not None else self.sources.rng.randrange(self.options.seats),
            started_at=self.sources.wall(),
        ))  # fmt: skip
        info, game = self.info(), self._game()
        upcoming = self._upcoming_turn_ms()
        self._broadcast(lambda v: p.Started(
            commitment=info.commitment or "", start=game.start, table=info, view=v,
            turn_deadline_ms=upcoming,
        ))  # fmt: skip
        self._schedule_turn(now)

    # -- turns -----------------------------------------------------------------------------

    def _game(self) -> Game:
        if self.game is None or self.state in ("lobby", "expired"):
            raise IllegalActionError("the game has not started", "not_started")
        if self.state == "over":
            raise IllegalActionError("the game is over", "game_over")
        return self.game

    def _reveal(self, seat: int, now: float, auto: bool = False) -> None:
        game = self._game()
        if game.round is not None:
            raise IllegalActionError("a slap round is still open", "round_open")
        if seat != game.to_move:
            raise IllegalActionError(f"it is seat {game.to_move}'s turn", "not_your_turn")
        self.turn_due = None
        card = game.draw[seat][0]
        self._emit(ev.Revealed(turn=len(game.turns) + 1, seat=seat, card=card.text, auto=auto))
        turn = game.turns[-1]
        if game.round is not None:
            self._open_round(now, announce=auto)
            return
        opened, n = turn.round is not None, len(game.turns)
        upcoming = self._upcoming_turn_ms()
        self._broadcast(lambda v: p.Revealed(
            turn=n, seat=seat, card=card.text, round=opened,
            window_ms=self.options.slap_window_ms if opened else None, auto=auto, view=v,
            turn_deadline_ms=None if opened else upcoming,
        ))  # fmt: skip
        if opened:  # an empty centre: the round closed at once (R15)
            self._broadcast(lambda v: p.RoundClosed(turn=n, view=v, turn_deadline_ms=upcoming))
        self._next(now)

    def _next(self, now: float) -> None:
        if self.game is not None and self.game.over:
            self._finish()
        else:
            self._schedule_turn(now)

    def _schedule_turn(self, now: float) -> None:
        game = self.game
        if game is None or game.over or game.round is not None:
            self.turn_due = None
            return
        seat = self.seats[game.to_move]
        if seat.is_bot and seat.level is not None:
            delay = bots.reveal_delay_ms(seat.level, self.sources.rng) * self.bot_pace
        else:
            delay = self.options.turn_timeout_ms
        self.turn_due = now + delay

    def _tick(self, now: float) -> None:
        while self.bot_plans and self.bot_plans[0][0] <= now:
            _, seat, card, ms, last = self.bot_plans.pop(0)
            self._bot_slap(seat, card, ms, last)
        if self.clock is not None:
            self._maybe_close(now)
        game = self.game
        if self.turn_due is not None and now >= self.turn_due and game is not None:
            self.turn_due = None
            with contextlib.suppress(FlyswatError):  # nothing to reveal: the game moved on
                self._reveal(game.to_move, now, auto=not self.seats[game.to_move].is_bot)
        idle = self.idle_since
        if self.state == "lobby" and idle is not None and now >= idle + LOBBY_TTL_MS:
            self._emit(ev.Expired())

    # -- slap rounds -----------------------------------------------------------------------

    def _open_round(self, now: float, *, everyone: bool = False, announce: bool = False) -> None:
        """Time the engine's open round and tell everyone; the reveal handed to each seat's
        socket starts that seat's clock. ``everyone``: after a restart, wait for every seat
        still to complete the round, connected yet or not."""
        game = self.game
        if game is None or game.round is None:
            return
        waited = [s.index for s in self.seats if (everyone or s.connected)
                  and not game.seat_complete(s.index)]  # fmt: skip
        self.clock = RoundClock(
            rules=self.rules, opened_at=now, waited=waited,
            allowance_ms={s.index: 0.0 if s.is_bot else s.rtt.allowance() for s in self.seats},
        )  # fmt: skip
        r, n = game.round, len(game.turns)
        self._broadcast(lambda v: p.Revealed(
            turn=n, seat=r.seat, card=r.trigger.text, round=True,
            window_ms=self.options.slap_window_ms, auto=announce, view=v, turn_deadline_ms=None,
        ), mark=n)  # fmt: skip
        self._plan_bots(now, waited)
        self._maybe_close(now)

    def _plan_bots(self, now: float, waited: list[int]) -> None:
        game = self._game()
        plans = []
        for seat in self.seats:
            if not seat.is_bot or seat.level is None or seat.index not in waited:
                continue
            planned = bots.decide(seat.level, view(game, seat.index), self.sources.rng)
            planned = sorted((s for s in planned if self.rules.in_window(s.ms)), key=lambda s: s.ms)
            if not planned:
                self._emit(ev.SaidDone(turn=len(game.turns), seat=seat.index))
            for i, s in enumerate(planned):
                plans.append((now + s.ms, seat.index, s.card, s.ms, i == len(planned) - 1))
        self.bot_plans = sorted(plans, key=lambda t: t[0])

    def _bot_slap(self, seat: int, card: Card, ms: int, last: bool) -> None:
        game, clock = self.game, self.clock
        if game is None or game.round is None or clock is None:
            return
        try:
            game.check_slap(seat, card)
            clock.planned(ms)
        except FlyswatError:
            pass  # a bot's plan that the table refuses is simply not played
        else:
            self._emit(ev.Slapped(turn=len(game.turns), seat=seat, card=card.text, ms=ms))
        if last and not game.seat_complete(seat):
            self._emit(ev.SaidDone(turn=len(game.turns), seat=seat))
        self._hands()

    def _hands(self) -> None:
        turn = len(self._game().turns)
        self._broadcast(lambda v: p.Hands(turn=turn, view=v))

    def _current_round(self, seat: int, turn: int | None) -> tuple[Game, RoundClock]:
        game, clock = self._game(), self.clock
        is_open = game.round is not None and clock is not None
        if turn is not None and (turn != len(game.turns) or not is_open):
            raise IllegalActionError(f"the round of turn {turn} is not open", "stale_round")
        if game.round is None or clock is None:
            raise IllegalActionError("no slap round is open", "no_round")
        if seat in game.round.done or not clock.waits_for(seat):
            raise IllegalActionError("you already said you are done this round", "done")
        return game, clock

    def _slap(
        self, seat: int, text: str, client_ms: int | None, turn: int | None, now: float
    ) -> None:
        game, clock = self._current_round(seat, turn)
        card = Card.parse(text)
        game.check_slap(seat, card)
        n = len(game.turns)
        try:
            ms = clock.judge(seat, client_ms, now)
        except IllegalActionError as e:
            if e.code == "too_fast":
                self._emit(ev.TooFast(turn=n, seat=seat))
                self._table_update()
            raise
        self._emit(ev.Slapped(turn=n, seat=seat, card=card.text, ms=round(ms, 3)))
        conn = self.seats[seat].conn
        if conn is not None:
            self._send(conn, p.Accepted(turn=n, card=card.text, ms=round(ms)))
        self._hands()
        self._maybe_close(now)

    def _done(self, seat: int, turn: int | None, now: float) -> None:
        game, _ = self._current_round(seat, turn)
        self._emit(ev.SaidDone(turn=len(game.turns), seat=seat))
        self._hands()
        self._maybe_close(now)

    def _round_deadline(self) -> float | None:
        game, clock = self.game, self.clock
        if game is None or game.round is None or clock is None:
            return None
        incomplete = [s for s in clock.sent_at if not game.seat_complete(s)]
        return clock.deadline(incomplete) if incomplete else None

    def _maybe_close(self, now: float) -> None:
        """Decide the round if no slap still to come can count (R21)."""
        game, clock = self.game, self.clock
        if game is None or game.round is None or clock is None:
            return
        deadline = self._round_deadline()
        if deadline is not None and now < deadline:
            return
        n = len(game.turns)
        self._emit(ev.Closed(turn=n))
        upcoming = self._upcoming_turn_ms()
        self._broadcast(lambda v: p.RoundClosed(turn=n, view=v, turn_deadline_ms=upcoming))
        self._next(now)

    # -- the end ---------------------------------------------------------------------------

    def _finish(self) -> None:
        game = self.game
        if game is None or self.game_id is None:
            return
        entries = [s.record_entry() for s in self.seats]
        record = to_record(game, entries, id=self.game_id, started_at=self.started_at,
                           with_commitment=True, min_reaction_ms=MIN_HUMAN_MS)  # fmt: skip
        self._emit(ev.Over(game_id=self.game_id, record=record))
        info = self.info()
        self._broadcast(lambda v: p.Over(
            result=record["result"], seed=str(game.seed), commitment=record["commitment"],
            record_url=info.record_url or "", table=info, view=v,
        ))  # fmt: skip
