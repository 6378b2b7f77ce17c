"""A table, sans I/O: commands in, effects out (see :mod:`flyswat.table.io`).

One :class:`Table` is one table: the commands it takes are here, built on a
:class:`~flyswat.table.context.Context` that holds its state (seats, connections, lobby, game,
slap round) and what it stores and tells. The handlers it hands each action to
(:mod:`~flyswat.table.turns`, :mod:`~flyswat.table.lifecycle`, :mod:`~flyswat.table.sessions`,
:mod:`~flyswat.table.reactions`) are given that context, never the table, and never import
this module. A table never reads a clock, sleeps, touches a socket or a database:
:meth:`Table.handle` takes a command and ``now`` and returns an
:class:`~flyswat.table.io.Outcome`. Every change of its state goes through
:meth:`~flyswat.table.context.Context.apply` of a stored event (:mod:`flyswat.table.events`),
so rebuilding a table after a crash (:meth:`Table.restore`) runs the same code as play did.

Each action is checked in full first — raising :class:`~flyswat.errors.FlyswatError` (with a
code) changes nothing — then its events are emitted (applied, and listed for the store), then
its messages are listed. The runner stores the events before it delivers any message.

Timers are one wake-up time (:attr:`Table.wake_at`): the turn timeout (a human's, after which
the server reveals for them) or a bot's pause before revealing, a bot's planned slap, the
moment a slap round can be decided (:class:`~flyswat.arbiter.RoundClock`), a lobby's expiry.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeAlias

from flyswat import protocol as p
from flyswat.errors import LATE, FlyswatError, IllegalActionError, MalformedError
from flyswat.players.identity import display_name
from flyswat.table import events as ev
from flyswat.table import lifecycle, reactions, sessions, turns
from flyswat.table.context import Context, check_options
from flyswat.table.io import (
    BETWEEN,
    Command,
    Gone,
    Join,
    Message,
    Outcome,
    Rtt,
    Sent,
    Sources,
    StartBy,
    Tick,
)
from flyswat.table.seats import Conn, Seat, seat_token, token_hash
from flyswat.table.sessions import CLOSE_POLICY


class Table(Context):
    """One table. Build it with :meth:`create` or :meth:`restore`; drive it with
    :meth:`handle`."""

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
        name = display_name(host_name)
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
                # A seat that had dropped out of the round did not say it was done: its
                # window starts afresh too (it may come back), as a connected one's does.
                for seat in sorted(table.game.round.away):
                    table.emit(ev.Back(turn=len(table.game.turns), seat=seat))
                turns.open_round(table, now, everyone=True)
            else:
                turns.schedule_turn(table, now)
        return table, table._end()

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
            case Rtt(conn=conn_id, ms=ms, network_ms=network_ms):
                self.observe(conn_id, ms, network_ms, now)
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

    def observe(self, conn_id: int, ms: float | None, network_ms: float | None,
                now: float) -> None:  # fmt: skip
        """Connection ``conn_id``'s round trips at ``now`` (an :class:`Rtt`'s fields), for
        its seat's arbitration: nothing is stored, told or woken for (the runner's shortcut
        past :meth:`handle`)."""
        conn = self.conns.get(conn_id)
        if conn is not None and conn.seat is not None:
            link = self.seats[conn.seat].link
            if ms is not None:
                link.pong(ms, now)
            if network_ms is not None:
                link.network_rtt(network_ms, now)

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

    # -- the outcome of one command --------------------------------------------------------

    def _begin(self) -> Outcome:
        self.out = Outcome()
        return self.out

    def _end(self) -> Outcome:
        out, self.out = self.out, BETWEEN
        return out

    # -- the lists -------------------------------------------------------------------------

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
        handler = SEAT_MESSAGES.get(type(msg))  # type: ignore[arg-type]
        if handler is None:
            raise MalformedError("not a message a seat sends", "unknown_type")
        handler(self, seat.index, msg, now)

    def _ready(self, seat: int, ready: bool) -> None:
        if self.state != "lobby":
            raise IllegalActionError("the game has already started", "already_started")
        if self.seats[seat].ready != ready:
            self.emit(ev.ReadySet(seat=seat, ready=ready))
            self.table_update()

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
        cleaned = display_name(join.name)
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
        turns.begin(self, now)


Handler: TypeAlias = Callable[[Table, int, Any, float], None]

#: What each client message a seat sends does at its table: ``(table, seat, message, now)``,
#: one entry per model of :data:`flyswat.protocol.CLIENT_MESSAGES` but the connection's own
#: (``hello``, ``pong``: :meth:`Table._dispatch`). Raises to refuse, having changed nothing.
SEAT_MESSAGES: dict[type[p.ClientMessage], Handler] = {
    p.Ready: lambda t, seat, m, now: t._ready(seat, m.ready),
    p.Start: lambda t, seat, m, now: t._start(seat, now),
    p.Reveal: lambda t, seat, m, now: turns.reveal(t, seat, now),
    p.Slap: lambda t, seat, m, now: turns.slap(t, seat, m.card, m.ms, m.turn, now, m.done),
    p.Done: lambda t, seat, m, now: turns.done(t, seat, m.turn, now),
    p.Rematch: lambda t, seat, m, now: lifecycle.rematch(t, seat, m.accept, now),
    p.Leave: lambda t, seat, m, now: lifecycle.leave(t, seat, now),
    p.SeatBot: lambda t, seat, m, now: lifecycle.seat_bot(t, seat, m.target, m.level, now),
    p.Kick: lambda t, seat, m, now: lifecycle.kick(t, seat, m.target, now),
    p.React: lambda t, seat, m, now: reactions.react(t, seat, m.reaction, now),
}
