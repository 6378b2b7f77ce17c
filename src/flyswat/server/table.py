"""One table's seats, connections, lobby and event log (the async layer of the house).

The table owns the clock and the timers; the rules are the engine's, the slap order the
arbiter's. It runs on one asyncio loop and no method awaits, so every action is atomic: it
is checked in full (raising :class:`~flyswat.errors.FlyswatError` with a code and changing
nothing), stored as an event, then told to everyone in one broadcast step.

Timers: the player to move has ``turn_timeout_ms`` to reveal before the server reveals for
them; a bot reveals after :func:`flyswat.bots.reveal_delay_ms` (times ``bot_pace``); a slap
round closes as soon as :class:`~flyswat.arbiter.RoundArbiter` says nothing can change.
"""

from __future__ import annotations

import asyncio
import random
import secrets
import time
from collections.abc import Callable
from typing import Any, Literal, Self

from pydantic import BaseModel

from flyswat import bots
from flyswat.arbiter import RoundArbiter
from flyswat.cards import Card
from flyswat.engine import Game
from flyswat.errors import IllegalActionError, MalformedError
from flyswat.rules import Rules
from flyswat.server import protocol as p
from flyswat.server.seats import Client, Seat, clean_name, new_token, token_hash
from flyswat.server.store import Store
from flyswat.shuffle import commitment
from flyswat.view import view


def monotonic_ms() -> float:
    """The clock the tables use, in ms: the same one as the asyncio loop's timers."""
    return time.monotonic() * 1000.0


class TableBase:
    """A table's seats, connections, lobby and event log; :class:`flyswat.server.play.Table`
    adds the game in play.

    Build one with :meth:`create` (a new table, the host seated) or :meth:`restore` (replay
    of stored events). ``store`` None keeps nothing (unit tests).
    """

    def __init__(
        self,
        code: str,
        options: p.TableOptions,
        *,
        host: int,
        store: Store | None,
        bot_pace: float = 1.0,
        clock: Callable[[], float] = monotonic_ms,
    ) -> None:
        self.code = code
        self.options = options
        self.host = host
        self.store = store
        self.bot_pace = bot_pace
        self.clock = clock
        self.rng = random.Random(secrets.randbits(64))
        levels = {b.seat: b.level for b in options.bots}
        self.seats = [
            Seat(i, "bot", levels[i], f"Bot {i + 1}") if i in levels else Seat(i, "human")
            for i in range(options.seats)
        ]
        self.spectators: set[Client] = set()
        self.state: Literal["lobby", "playing", "over"] = "lobby"
        self.game: Game | None = None
        self.game_id: str | None = None
        self.started_at = ""
        self.record: dict[str, Any] | None = None
        self.arbiter: RoundArbiter | None = None
        self.round_opened = 0.0
        self.turn_deadline: float | None = None
        self._turn_timer: asyncio.TimerHandle | None = None
        self._round_timers: list[asyncio.TimerHandle] = []
        self._replaying = False

    # -- creation and replay -------------------------------------------------------------------

    @staticmethod
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

    @classmethod
    def create(
        cls, code: str, options: p.TableOptions, host_name: str, *, store: Store | None, **kw: Any
    ) -> tuple[Self, str]:
        """A new table whose host takes the first human seat; returns it and the host's token."""
        cls.check_options(options)
        name = clean_name(host_name)
        host = next(s for s in range(options.seats) if s not in {b.seat for b in options.bots})
        table = cls(code, options, host=host, store=store, **kw)
        table._event("create", {"options": options.model_dump(), "host": host})
        token = new_token()
        table._event("join", {"seat": host, "name": name, "token_hash": token_hash(token)})
        return table, token

    @classmethod
    def restore(
        cls, code: str, events: list[tuple[str, dict[str, Any]]], *, store: Store, **kw: Any
    ) -> Self:
        """Rebuild a table from its stored events (replaying the engine), then resume play:
        a round that was open reopens with a fresh slap window."""
        kind, data = events[0]
        if kind != "create":
            raise MalformedError(f"table {code}: the first event is {kind!r}, not create")
        table = cls(code, p.TableOptions(**data["options"]), host=data["host"], store=store, **kw)
        table._replaying = True
        for kind, data in events:
            table._apply(kind, data)
        table._replaying = False
        table.record = store.record(code) if table.state == "over" else None
        return table

    def _event(self, kind: str, data: dict[str, Any]) -> None:
        """Store an event, then apply it: nothing is applied that is not stored."""
        if self.store is not None:
            self.store.append(self.code, kind, data)
        self._apply(kind, data)

    def _apply(self, kind: str, data: dict[str, Any]) -> None:
        if kind == "join":
            seat = self.seats[data["seat"]]
            seat.name, seat.token_hash = data["name"], data["token_hash"]
        elif kind == "ready":
            self.seats[data["seat"]].ready = data["ready"]
        elif kind == "start":
            rules = self.check_options(self.options)
            self.game = Game.new(rules, data["seed"], data["start"])
            self.game_id, self.started_at = data["game_id"], data["started_at"]
            self.state = "playing"
        elif kind == "over":
            self.state = "over"
        elif self._replaying and self.game is not None and kind == "reveal":
            turn = self.game.reveal()
            if turn.card.text != data["card"]:
                raise MalformedError(f"table {self.code}: replay diverged at {data}")
        elif self._replaying and self.game is not None and kind == "round":
            for s in data["slaps"]:
                self.game.slap(s["seat"], Card.parse(s["card"]), s["ms"])
            self.game.close_round()

    # -- what everyone sees ----------------------------------------------------------------

    def info(self) -> p.TableInfo:
        """The table's public state."""
        over = self.state == "over" and self.game is not None
        return p.TableInfo(
            code=self.code,
            state=self.state,
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
            spectators=len(self.spectators),
            game_id=self.game_id,
            commitment=commitment(self.game.seed) if self.game and self.game.seed else None,
            seed=str(self.game.seed) if over and self.game else None,
            record_url=f"/api/tables/{self.code}/record" if over else None,
        )

    def _window_left(self) -> int | None:
        """ms left of the open round's slap window, or None."""
        if self.arbiter is None:
            return None
        return max(0, round(self.options.slap_window_ms - (self.clock() - self.round_opened)))

    def _turn_left(self) -> int | None:
        """ms until the server reveals for the human to move, or None."""
        if self.turn_deadline is None or self.arbiter is not None:
            return None
        return max(0, round(self.turn_deadline - self.clock()))

    def _upcoming_turn_ms(self) -> int | None:
        """The turn timeout about to start, if the next move is a human's (for messages sent
        just before the turn timer is set)."""
        game = self.game
        if game is None or game.over or game.round is not None or self.state != "playing":
            return None
        return None if self.seats[game.to_move].is_bot else self.options.turn_timeout_ms

    def clients(self) -> list[Client]:
        """Every open connection, players' and spectators'."""
        return [c for s in self.seats for c in s.clients] + list(self.spectators)

    def view_of(self, seat: int | None) -> dict[str, Any] | None:
        """``seat``'s view of the game (None before the start): the only game data sent."""
        return view(self.game, seat).to_json() if self.game is not None else None

    def _broadcast(
        self,
        build: Callable[[dict[str, Any] | None], BaseModel],
        on_sent: Callable[[int], Callable[[float], None]] | None = None,
    ) -> None:
        """One broadcast step: ``build(view)`` per receiving seat, queued to every client."""
        views: dict[int | None, BaseModel] = {}
        for client in self.clients():
            seat = client.seat
            if seat not in views:
                views[seat] = build(self.view_of(seat))
            hook = on_sent(seat) if on_sent is not None and seat is not None else None
            client.send(views[seat], hook)

    def _table_update(self) -> None:
        msg = p.TableUpdate(table=self.info())
        for client in self.clients():
            client.send(msg)

    # -- connections -----------------------------------------------------------------------

    def hello(self, client: Client, token: str | None) -> None:
        """Attach ``client`` as its token's seat (or as a spectator without one) and welcome
        it; raises ``bad_token``."""
        if token is None:
            client.seat = None
            self.spectators.add(client)
        else:
            seat = next((s for s in self.seats if s.holds(token)), None)
            if seat is None:
                raise IllegalActionError("no seat at this table has that token", "bad_token")
            client.seat = seat.index
            seat.clients.add(client)
        welcome = p.Welcome(
            seat=client.seat,
            table=self.info(),
            view=self.view_of(client.seat),
            window_left_ms=self._window_left(),
            turn_deadline_ms=self._turn_left(),
        )
        client.send(welcome)
        self._table_update()

    def leave(self, client: Client) -> None:
        """``client``'s connection closed."""
        self.spectators.discard(client)
        for seat in self.seats:
            seat.clients.discard(client)
        self._table_update()

    def pong(self, seat: int | None, rtt_ms: float, network_ms: float | None = None) -> None:
        """A ping's round trip of ``seat``'s connection, and the network's own measurement of
        it (``TCP_INFO`` or a trusted front: :mod:`.netinfo`) when there is one."""
        if seat is not None:
            now = self.clock()
            self.seats[seat].link.pong(rtt_ms, now)
            if network_ms is not None:
                self.seats[seat].link.network_rtt(network_ms, now)

    # -- lobby -----------------------------------------------------------------------------

    def join(self, name: str) -> tuple[int, str]:
        """Take the next free human seat: ``(seat, token)``; raises ``already_started``,
        ``table_full`` or ``bad_name``."""
        if self.state != "lobby":
            raise IllegalActionError("the game has already started", "already_started")
        cleaned = clean_name(name)
        free = next((s for s in self.seats if not s.joined), None)
        if free is None:
            raise IllegalActionError("every seat is taken", "table_full")
        token = new_token()
        self._event("join", {"seat": free.index, "name": cleaned, "token_hash": token_hash(token)})
        self._table_update()
        return free.index, token

    def ready(self, seat: int, ready: bool) -> None:
        """``seat`` is ready, or not, to start."""
        if self.state != "lobby":
            raise IllegalActionError("the game has already started", "already_started")
        self._event("ready", {"seat": seat, "ready": ready})
        self._table_update()
