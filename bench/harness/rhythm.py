"""The slap-table rhythm (``shared/LOAD-RHYTHM.md``) as a cheap load generator.

Tables of four seats, every seat a client of this process on a :class:`~harness.wire.WireSocket`.
One client creates the table, three join (``joins_in_flight`` requests at once in this process;
one that takes more than ``join_timeout_s`` has failed); each connects, says ``hello`` and
``ready``, and the host sends ``start`` once the lobby shows every seat ready. Then:

- the player to move reveals ``reveal_s`` after the previous reveal arrived (after ``started``
  for the first), or, when a slap round is open then, as soon as that round's result arrives;
- on a reveal that opens a round, every client waits a uniform ``react_s`` (150–600 ms), then
  slaps the highest allowed fly (:func:`flyswat.rules.allowed`) with that true delay as ``ms``
  and the reveal's ``turn``, and says ``done`` (not when that hand completed its seat: one fly
  in the centre) — in the slap's own message where the server speaks protocol 4 or more, as a
  message after it to an older one;
- every ``ping`` is answered with a ``pong`` at once (read without ``json``);
- when a game is over its four clients start a new table at once (constant load).

Measured on this process's one clock (``loop.time()``): for each round, the client whose hand
or ``done`` was the table's last of the round notes from its own send to its ``round`` message
(*last action → result*); a round whose result has not come ``timeout_s`` after its last action
is a timeout; joins, failed joins, disconnects, ``error`` messages by code, messages each way,
and the loop's own lag (a 50 ms sleep's overshoot), so that a slow generator is never taken for
a slow server.

Protocols 2 to 4 alike: each client keeps one merged view and does ``view.update(msg["view"])``
for every message with a view (on 2 a whole view, from 3 on the fields that changed); ``hands``,
``accepted`` and (except for the host in the lobby) ``table`` are skipped by their first bytes,
unknown types and fields are ignored.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

from flyswat.cards import Card
from flyswat.rules import allowed
from harness.host import Host
from harness.libclient import LibSocket
from harness.wire import WireSocket

_TYPE = b'{"type":"'
_PING = b'{"type":"ping","id":'
_PONG = b'{"type":"pong","id":'
#: Message types read no further than their first bytes (``{"type":"han`` ...).
_SKIP = (b"han", b"acc")
_REVEAL = b'{"type":"reveal"}'
_READY = b'{"type":"ready"}'
_START = b'{"type":"start"}'


@dataclass(frozen=True)
class RhythmPlan:
    """What one generator process does: ``tables`` tables of ``seats`` on the server at
    ``http``. Times in seconds; ``options`` are more ``CreateTable`` fields (short games for
    a smoke test, say); ``deflate`` offers ``permessage-deflate`` as browsers do; ``client``
    is ``wire`` (:mod:`harness.wire`) or ``websockets`` (the library, to compare costs)."""

    http: str
    tables: int
    seats: int = 4
    slap_window_ms: int = 1000
    reveal_s: float = 2.0
    react_s: tuple[float, float] = (0.150, 0.600)
    joins_in_flight: int = 50
    join_timeout_s: float = 20.0
    timeout_s: float = 3.0
    duration_s: float = 60.0
    setup_timeout_s: float = 600.0
    options: dict[str, Any] = field(default_factory=dict)
    deflate: bool = False
    client: str = "wire"
    seed: int = 0
    name: str = "g0"
    start: bool = True  # False: the hosts never start their games (the set-up alone)


class Player:
    """One seat's client: its socket, its merged view and its part of the rhythm."""

    def __init__(self, table: Table, seated: dict[str, Any]) -> None:
        self.table = table
        self.gen = table.gen
        self.seat: int = seated["seat"]
        self.token: str = seated["token"]
        self.path: str = seated["ws_url"]
        self.host = bool(seated.get("host"))
        self.sock: WireSocket | LibSocket | None = None
        self.view: dict[str, Any] = {}
        self.welcomed = False
        self.over = False
        self.open_turn: int | None = None  # the turn of the round open now, as far as we know
        self.slap_says_done = False  # protocol 4: a slap carries its seat's done
        self.reveal_turn: int | None = None  # our reveal is due after this turn
        self.reveal_waits = False  # due, but a round was open: reveal when its result comes
        self.started = False

    # -- messages in --------------------------------------------------------------------------

    def on_message(self, data: bytes, now: float) -> None:
        """One text message from the server, arrived at ``now``."""
        gen = self.gen
        gen.received += 1
        kind = data[9:12] if data.startswith(_TYPE) else b""
        gen.kinds[kind] += 1
        if kind == b"pin" and data.startswith(_PING):
            ping_id = data[len(_PING) : -1]
            if ping_id.isdigit() and data.endswith(b"}"):
                self.send(_PONG + ping_id + b"}")
                return
        if kind in _SKIP or (kind == b"tab" and (self.started or not self.host)):
            return
        msg = json.loads(data)
        view = msg.get("view")
        if isinstance(view, dict):
            self.view.update(view)
        handler = _HANDLERS.get(msg.get("type", ""))
        if handler is not None:
            handler(self, msg, now)

    def on_lost(self, by_us: bool) -> None:
        """The socket closed; a close we did not ask for (before the game was over) counts."""
        self.sock = None
        if not by_us and not self.over:
            self.gen.count["disconnects"] += 1

    def _welcome(self, msg: dict[str, Any], now: float) -> None:
        self.welcomed = True
        self.slap_says_done = msg.get("protocol", 0) >= 4
        self.table.welcomed(self)
        if msg.get("view") is None:
            self.send(_READY)
            self._lobby(msg)

    def _lobby(self, msg: dict[str, Any], now: float = 0.0) -> None:
        if not self.host or self.started or self.table.start_sent or not self.gen.plan.start:
            return
        players = (msg.get("table") or {}).get("players") or []
        if len(players) == self.table.seats and all(
            p["joined"] and p["connected"] and (p["ready"] or p["host"]) for p in players
        ):
            self.table.start_sent = True
            self.send(_START)

    def _started(self, msg: dict[str, Any], now: float) -> None:
        self.started = True
        self._plan_reveal(now)

    def _reveal(self, msg: dict[str, Any], now: float) -> None:
        turn = msg["turn"]
        if msg.get("auto") and msg.get("seat") == self.seat:
            self.gen.count["auto_reveals"] += 1
        if msg.get("round"):
            self.open_turn = turn
            if self.view.get("centre"):
                lo, hi = self.gen.plan.react_s
                delay = self.gen.rng.uniform(lo, hi)
                self.gen.loop.call_at(now + delay, self._slap, turn, now)
        self._plan_reveal(now)

    def _round(self, msg: dict[str, Any], now: float) -> None:
        turn = msg.get("turn")
        if self.open_turn == turn:
            self.open_turn = None
        self.table.result(self, turn, now)
        if self.reveal_waits:
            self.reveal_waits = False
            self._reveal_due(self.reveal_turn)

    def _over(self, msg: dict[str, Any], now: float) -> None:
        self.over = True
        self.table.game_over()

    def _error(self, msg: dict[str, Any], now: float) -> None:
        self.gen.errors[str(msg.get("code"))] += 1

    # -- the rhythm ---------------------------------------------------------------------------

    def _plan_reveal(self, now: float) -> None:
        view = self.view
        if view.get("to_move") == self.seat and not view.get("over"):
            turn = view.get("turn")
            if self.reveal_turn != turn:
                self.reveal_turn = turn
                self.reveal_waits = False
                self.gen.loop.call_at(now + self.gen.plan.reveal_s, self._reveal_due, turn)

    def _reveal_due(self, turn: int | None) -> None:
        view = self.view
        if (self.over or view.get("over") or view.get("turn") != turn
                or view.get("to_move") != self.seat):  # fmt: skip
            # The game moved on (the server revealed for us), or it is over: the last play's
            # view says so before the ``over`` message (stored after it) comes.
            return
        if self.open_turn is not None:
            self.reveal_waits = True
            return
        self.send(_REVEAL)

    def _slap(self, turn: int, shown_at: float) -> None:
        if self.open_turn != turn or self.sock is None:
            self.gen.count["late_hands"] += 1  # the round closed before our hand
            return
        centre = [Card.parse(c) for c in self.view["centre"]]
        colours = allowed(centre)
        best = max((c for c in centre if c.colour in colours), key=_value, default=None)
        if best is None:  # no fly in the centre: nothing to slap (the round closes alone)
            return
        now = self.gen.loop.time()
        ms = round((now - shown_at) * 1000)
        slap = b'{"type":"slap","card":"%s","ms":%d,"turn":%d' % (best.text.encode(), ms, turn)
        done = min(self.view.get("hands", 2), len(centre)) > 1  # else the hand completed it
        if done and self.slap_says_done:  # in the slap's own message (protocol 4)
            out = [slap + b',"done":true}']
        else:
            out = [slap + b"}"]
            if done:
                out.append(b'{"type":"done","turn":%d}' % turn)
        if self.sock.send_many(out):
            self.gen.sent += len(out)
            self.table.acted(self, turn, now)

    def send(self, payload: bytes) -> None:
        """Send one message (nothing when the socket is gone)."""
        if self.sock is not None and self.sock.send(payload):
            self.gen.sent += 1

    def close(self) -> None:
        """Close our socket."""
        if self.sock is not None:
            self.sock.close()


def _value(card: Card) -> tuple[int, int]:
    """The order flies are chosen in: by value, then by the deck's order."""
    return card.value, card.index


_HANDLERS = {
    "welcome": Player._welcome,
    "table": Player._lobby,
    "started": Player._started,
    "reveal": Player._reveal,
    "round": Player._round,
    "over": Player._over,
    "error": Player._error,
}


class Table:
    """One table's four clients, and the bookkeeping of its rounds (one clock)."""

    def __init__(self, gen: Host, number: int) -> None:
        self.gen = gen
        self.number = number
        self.seats = gen.plan.seats
        self.players: list[Player] = []
        self.ready = asyncio.Event()
        self.start_sent = False
        self.over = False
        # The round being acted on: its turn, hands and dones sent so far.
        self.acting: tuple[int, int] = (-1, 0)
        # The round whose last action is sent and whose result the last actor awaits:
        # (turn, seat, sent at).
        self.waiting: tuple[int, int, float] | None = None

    async def open(self) -> bool:
        """Create the table, join its other seats, connect every client; True once every
        client is welcomed, False (and the table given up) when any step failed."""
        gen, plan = self.gen, self.gen.plan
        body = {"name": f"{plan.name}t{self.number}", "seats": plan.seats,
                "slap_window_ms": plan.slap_window_ms, **plan.options}  # fmt: skip
        host = await gen.seat_request("/api/tables", body)
        if host is None:
            return False
        code = host["code"]
        joins = await asyncio.gather(
            *(gen.seat_request(f"/api/tables/{code}/join", {"name": f"p{i}"})
              for i in range(1, plan.seats))
        )  # fmt: skip
        if any(j is None for j in joins):
            return False
        self.players = [Player(self, s) for s in (host, *joins) if s is not None]
        self.port = await gen.owner_port(code)  # workers: straight to the table's own
        try:
            for player in self.players:
                player.sock = await gen.connect(player)
                player.send(b'{"type":"hello","token":"%s"}' % player.token.encode())
            await asyncio.wait_for(self.ready.wait(), plan.join_timeout_s)
        except (OSError, TimeoutError):
            gen.count["connects_failed"] += 1
            self.close()
            return False
        return True

    def welcomed(self, player: Player) -> None:
        if all(p.welcomed for p in self.players):
            self.ready.set()

    def acted(self, player: Player, turn: int, now: float) -> None:
        """``player`` sent its hand (and done) for the round of ``turn`` at ``now``."""
        last_turn, n = self.acting
        n = n + 1 if last_turn == turn else 1
        self.acting = (turn, n)
        if n == self.seats:  # the round's last action
            self.waiting = (turn, player.seat, now)
            self.gen.last_actions.append(now)
            self.gen.loop.call_at(now + self.gen.plan.timeout_s, self._timed_out, turn, now)

    def result(self, player: Player, turn: int | None, now: float) -> None:
        """``player`` received the result of the round of ``turn`` at ``now``."""
        waiting = self.waiting
        if waiting is not None and waiting[0] == turn and waiting[1] == player.seat:
            self.waiting = None
            self.gen.rounds.append((waiting[2], (now - waiting[2]) * 1000))
        elif player.seat == 0 and self.acting[0] == turn and self.acting[1] < self.seats:
            self.gen.count["rounds_closed_before_last_hand"] += 1

    def _timed_out(self, turn: int, sent_at: float) -> None:
        waiting = self.waiting
        if waiting is not None and waiting[0] == turn and waiting[2] == sent_at:
            self.gen.timeouts.append(sent_at)

    def game_over(self) -> None:
        """A client saw the end: close this table's sockets, start a new table at once."""
        if self.over:
            return
        self.over = True
        self.gen.count["games_over"] += 1
        self.gen.games_over_at.append(self.gen.loop.time())
        for player in self.players:
            player.over = True
        self.gen.loop.call_later(1.0, self.close)
        self.gen.spawn(self.gen.open_table())

    def close(self) -> None:
        for player in self.players:
            player.over = True
            player.close()
