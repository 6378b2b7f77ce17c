"""A sans-I/O table driven by hand: commands in, what it stored and told kept, time set by the
test. No loop, no socket, no sleep."""

from __future__ import annotations

import json
from typing import Any

from pydantic import TypeAdapter

from flyswat import protocol as p
from flyswat.cards import Card
from flyswat.engine import Game
from flyswat.errors import FlyswatError
from flyswat.table.core import Table
from flyswat.table.events import Event
from flyswat.table.io import (
    Close,
    Command,
    Fanout,
    Gone,
    Message,
    Outcome,
    Rtt,
    Send,
    Sent,
    Sources,
    Tick,
)
from flyswat.wire import Assembler

SERVER_MESSAGE: TypeAdapter[Any] = TypeAdapter(p.ServerMessage)


class Harness:
    """One table, its stored events, and what each connection was told.

    Connections are numbered by the test. A reveal marked for timing is handed over at once
    (as a connection that writes instantly would), unless ``deliver`` is False."""

    def __init__(
        self, seats: int = 3, *, deliver: bool = True, code: str = "TESTAB",
        table: dict[str, Any] | None = None, **options: Any,
    ) -> None:  # fmt: skip
        """``table``: more arguments of the :class:`Table` (its ``audience``, say)."""
        self.now = 1_000_000.0
        self.deliver = deliver
        opts = p.TableOptions(
            **{"slap_window_ms": 30_000, "turn_timeout_ms": 60_000, **options}, seats=seats
        )
        self.table, out = Table.create(code, opts, "Ana", Sources.fixed(), self.now,
                                       **(table or {}))  # fmt: skip
        self.fanouts: list[Fanout] = []  # every message fanned out to spectators
        self.stored: list[Event] = []
        self.told: dict[int, list[dict[str, Any]]] = {}
        self.wires: dict[int, Assembler] = {}
        self.raw: dict[int, list[dict[str, Any]]] = {}  # as sent, before assembling
        self.closed: dict[int, Close] = {}
        self.tokens = [out.reply[1]]
        self._keep(out)

    def _check_views(self, conns: set[int]) -> None:
        """Whoever was just told about the game now holds exactly its seat's view, once no
        coalesced hand counts are still to go out (protocol 3's deltas lose nothing)."""
        t = self.table
        if t.hands_due is not None or t.game is None:
            return
        for conn in conns:
            c = t.conns.get(conn)
            if c is not None and not (c.seat is None and t.watch_due is not None):
                last = next(m for m in reversed(self.told[conn]) if m.get("view") is not None)
                assert last["view"] == t.view_of(c.seat), f"conn {conn}"

    # -- driving ---------------------------------------------------------------------------

    def do(self, command: Command) -> Outcome:
        out = self.table.handle(command, self.now)
        self._keep(out)
        return out

    def _keep(self, out: Outcome) -> None:
        self.stored += out.events
        viewed = set()
        for send in _each(out.sends, self.fanouts):
            message = send.message
            if isinstance(message, bytes):  # protocol 3's lean messages, encoded by the table
                msg = json.loads(message)
                SERVER_MESSAGE.validate_python(msg)
            else:
                msg = message.model_dump(mode="json")
            self.raw.setdefault(send.conn, []).append(msg)
            msg = self.wires.setdefault(send.conn, Assembler()).feed(msg)
            if msg.get("view") is not None:
                viewed.add(send.conn)
            self.told.setdefault(send.conn, []).append(msg)
        self._check_views(viewed)
        for close in out.closes:
            self.closed[close.conn] = close
        if self.deliver:
            for send in out.sends:
                if isinstance(send, Send) and send.mark is not None:
                    self._keep(self.table.handle(Sent(send.conn, send.mark), self.now))

    def say(self, conn: int, **message: Any) -> Outcome:
        """Connection ``conn`` sends ``message`` as JSON text (parsed as the server does)."""
        try:
            parsed = p.parse_client(json.dumps(message))
        except FlyswatError as e:  # a malformed message is refused by the table
            return self.do(Message.refusing(conn, e))
        return self.do(Message(conn, parsed))

    def at(self, t: float) -> Outcome:
        """Let time run to ``t`` and wake the table if it asked for it."""
        self.now = t
        wake = self.table.wake_at
        return self.do(Tick()) if wake is not None and wake <= t else Outcome()

    def run_until_idle(self, until: float) -> None:
        """Wake the table at each time it asks for, until ``until``."""
        while (wake := self.table.wake_at) is not None and wake <= until:
            self.at(max(wake, self.now))
        self.now = until

    def rtt(self, conn: int, ms: float, times: int = 20) -> None:
        """``times`` pongs of ``ms``, each with the network's own measurement agreeing."""
        for _ in range(times):
            self.do(Rtt(conn, ms, ms))

    def gone(self, conn: int) -> Outcome:
        return self.do(Gone(conn))

    # -- reading ---------------------------------------------------------------------------

    def last(self, conn: int, kind: str) -> dict[str, Any]:
        return next(m for m in reversed(self.told.get(conn, [])) if m["type"] == kind)

    def kinds(self, conn: int) -> list[str]:
        return [m["type"] for m in self.told.get(conn, [])]

    @property
    def game(self) -> Game:
        assert self.table.game is not None
        return self.table.game

    # -- set-ups ---------------------------------------------------------------------------

    def seat_everyone(self) -> list[int]:
        """Every human seat joined, connected (conn = seat + 1) and ready; returns the conns."""
        table = self.table
        while any(not s.joined for s in table.seats):
            self.tokens.append(self.do(p_join(f"P{len(self.tokens)}")).reply[1])
        conns = []
        for token in self.tokens:
            seat = next(s.index for s in table.seats if s.holds(token))
            conn = seat + 1
            self.say(conn, type="hello", token=token)
            if seat != table.host:
                self.say(conn, type="ready")
            conns.append(conn)
        return conns

    def started(self) -> list[int]:
        conns = self.seat_everyone()
        self.say(self.table.host + 1, type="start")
        return conns

    def open_round(self, least: int = 1) -> list[Card]:
        """Reveal in turn until a round opens over at least ``least`` centre flies."""
        game = self.game
        while True:
            while game.round is not None:
                for s in range(len(self.table.seats)):
                    if game.round is not None and not game.seat_complete(s):
                        self.say(s + 1, type="done")
            self.say(game.to_move + 1, type="reveal")
            if game.round is not None and len(game.centre) >= least:
                return list(game.centre)

    def allowed_card(self) -> Card:
        r = self.game.round
        assert r is not None
        return next(c for c in self.game.centre if c.colour in r.allowed)


def _each(sends: list[Send | Fanout], fanouts: list[Fanout]) -> list[Send]:
    """Every message to one connection: a fan-out's, one for each of its connections (and
    the fan-out kept in ``fanouts``)."""
    out: list[Send] = []
    for send in sends:
        if isinstance(send, Fanout):
            fanouts.append(send)
            out += [Send(conn, send.message) for conn in send.conns]
        else:
            out.append(send)
    return out


def p_join(name: str) -> Command:
    from flyswat.table.io import Join

    return Join(name)
