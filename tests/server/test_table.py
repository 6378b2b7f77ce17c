"""A table driven directly, on a clock the test sets: arbitration as the table applies it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from pydantic import BaseModel

from flyswat.arbiter import JITTER_MS
from flyswat.bots import PlannedSlap
from flyswat.cards import Card
from flyswat.server import play
from flyswat.server.play import Table
from flyswat.server.protocol import TableOptions


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


class Client:
    """A connection that keeps what it is sent, handed over at once."""

    def __init__(self, clock: Clock) -> None:
        self.seat: int | None = None
        self.clock = clock
        self.got: list[dict[str, Any]] = []

    def send(self, message: BaseModel, on_sent: Callable[[float], None] | None = None) -> None:
        if on_sent is not None:
            on_sent(self.clock())
        self.got.append(message.model_dump())

    def last(self, kind: str) -> dict[str, Any]:
        return next(m for m in reversed(self.got) if m["type"] == kind)


def table_of(clock: Clock, seats: int = 3, **options: Any) -> tuple[Table, list[Client]]:
    """A started table of ``seats`` humans (plus ``bots``), each human connected."""
    opts = TableOptions(**{"slap_window_ms": 30_000, "turn_timeout_ms": 60_000, **options},
                        seats=seats)  # fmt: skip
    table, token = Table.create("TESTAB", opts, "Ana", store=None, clock=clock)
    tokens = [token] + [table.join(f"P{i}")[1] for i in range(seats - 1 - len(opts.bots))]
    clients = []
    for t in tokens:
        client = Client(clock)
        table.hello(client, t)
        if client.seat != table.host:
            table.ready(client.seat or 0, True)
        clients.append(client)
    table.start(table.host)
    return table, clients


def open_round(table: Table, least: int = 1) -> list[Card]:
    """Reveal in turn until a round opens over at least ``least`` centre flies."""
    game = table.game
    assert game is not None
    while True:
        while game.round is not None:
            for s in range(len(table.seats)):
                if table.arbiter is not None and not table.arbiter.complete(s):
                    table.done(s, None)
        table.reveal(game.to_move)
        if game.round is not None and len(game.centre) >= least:
            return list(game.centre)


def allowed_card(table: Table) -> Card:
    game = table.game
    assert game is not None and game.round is not None
    return next(c for c in game.centre if c.colour in game.round.allowed)


@pytest.mark.anyio
async def test_the_faster_reaction_is_underneath_even_when_it_arrives_later() -> None:
    clock = Clock()
    table, (ana, bruno, carla) = table_of(clock)
    for _ in range(20):
        table.pong(0, 1.0, 1.0)  # Ana: a fast link, allowance 1 ms + JITTER_MS
        table.pong(1, 100.0, 100.0)  # Bruno: a slow one, allowance 100 ms + JITTER_MS
    open_round(table)
    card, sent = allowed_card(table), clock.now
    clock.now = sent + 400
    table.slap(0, card.text, 400, None)  # E = 400: Ana's 400 stands
    clock.now = sent + 450
    table.slap(1, card.text, 330, None)  # E = 450, A = 100 + JITTER_MS: 338 at best
    assert bruno.last("accepted")["ms"] == round(450 - 100 - JITTER_MS)
    table.done(0, None)
    table.done(1, None)
    assert table.arbiter is not None  # Carla could still slap underneath
    table.done(2, None)
    closed = carla.last("round")["view"]["last_round"]
    assert closed["slaps"][:2] == [{"seat": 1, "card": card.text}, {"seat": 0, "card": card.text}]
    assert {"seat": 1, "card": card.text} in closed["won"]
    assert ana.last("round") == bruno.last("round") | {"view": ana.last("round")["view"]}


@pytest.mark.anyio
async def test_a_claim_beyond_the_allowance_loses_to_the_earlier_arrival() -> None:
    clock = Clock()
    table, (_, bruno, _) = table_of(clock)
    for _ in range(20):
        table.pong(0, 1.0, 1.0)
        table.pong(1, 1.0, 1.0)
    open_round(table)
    card, sent = allowed_card(table), clock.now
    clock.now = sent + 400
    table.slap(0, card.text, 400, None)
    clock.now = sent + 450
    table.slap(1, card.text, 200, None)  # claims 200, but the network explains 1 ms + jitter
    assert bruno.last("accepted")["ms"] == round(450 - 1 - JITTER_MS)
    for seat in range(3):
        table.done(seat, None)
    assert bruno.last("round")["view"]["last_round"]["won"][0] == {"seat": 0, "card": card.text}


@pytest.mark.anyio
async def test_the_round_closes_once_no_missing_slap_can_be_underneath() -> None:
    clock = Clock()
    table, clients = table_of(clock, slap_window_ms=600)
    for _ in range(20):
        for seat in range(3):
            table.pong(seat, 50.0 - JITTER_MS, 50.0 - JITTER_MS)  # allowance 50 ms each
    open_round(table)
    arb, game = table.arbiter, table.game
    assert arb is not None and arb.window_ms == 600 and game is not None
    sent = clock.now
    table.done(0, None)
    clock.now = sent + 650
    table._maybe_close()
    assert table.arbiter is arb
    clock.now = sent + 651
    table._maybe_close()
    assert table.arbiter is None
    assert clients[0].last("round")["turn"] == len(game.turns)


@pytest.mark.anyio
async def test_bot_slaps_take_their_planned_time_in_the_same_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = Clock()
    plan = lambda level, v, rng: [PlannedSlap(v.centre[0], 300)]  # noqa: E731
    monkeypatch.setattr(play.bots, "decide", plan)
    table, (ana,) = table_of(clock, seats=2, bots=[{"seat": 1, "level": "hard"}])
    for _ in range(20):
        table.pong(0, 1.0, 1.0)
    game = table.game
    assert game is not None
    while game.round is None:
        table.reveal(game.to_move)  # the bot's turns too: its own timer would be slower
    target, sent = game.centre[0], clock.now
    clock.now = sent + 320
    table.slap(0, target.text, 320, None)  # the human arrives first, but the bot was faster
    await asyncio.sleep(0.45)  # the bot's hand lands 300 ms after the reveal, on the real loop
    if table.arbiter is not None:  # with one centre fly, Ana's one hand already completed her
        table.done(0, None)
    closed = ana.last("round")["view"]["last_round"]
    assert closed["slaps"] == [{"seat": 1, "card": target.text}, {"seat": 0, "card": target.text}]


@pytest.mark.anyio
async def test_messages_say_how_long_the_turn_and_the_window_have_left() -> None:
    clock = Clock()
    table, (ana, *_) = table_of(clock)
    assert ana.last("started")["turn_deadline_ms"] == 60_000
    game = table.game
    assert game is not None
    while True:
        table.reveal(game.to_move)
        shown = ana.last("reveal")
        if game.round is not None:
            break
        if shown["round"]:
            assert ana.last("round")["turn_deadline_ms"] == 60_000
        else:
            assert shown["turn_deadline_ms"] == 60_000
        clock.now += 1000
        late = Client(clock)
        table.hello(late, None)
        assert late.last("welcome")["turn_deadline_ms"] == 59_000
        assert late.last("welcome")["window_left_ms"] is None
    assert shown["turn_deadline_ms"] is None
    clock.now += 500
    late = Client(clock)
    table.hello(late, None)
    welcome = late.last("welcome")
    assert (welcome["window_left_ms"], welcome["turn_deadline_ms"]) == (29_500, None)
    assert late.got[-1]["type"] == "hands"  # the hands so far follow the welcome


@pytest.mark.anyio
async def test_a_player_who_drops_during_a_round_is_not_waited_for() -> None:
    clock = Clock()
    table, (ana, bruno, carla) = table_of(clock)
    open_round(table)
    table.done(0, None)
    table.done(1, None)
    assert table.arbiter is not None
    table.leave(carla)
    assert table.arbiter is None
    assert ana.last("round")["turn"] == bruno.last("round")["turn"]
