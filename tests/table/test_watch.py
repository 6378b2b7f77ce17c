"""Watching, sans I/O: a broadcast reaches every spectator as one message encoded once, the
spectators of a node's tables share one cap, and a spectator's coming and going tells nobody
else."""

from __future__ import annotations

from flyswat.table.context import WATCH_HANDS_MS
from flyswat.table.io import Close, Fanout, Send
from flyswat.table.seats import Audience
from flyswat.table.sessions import CLOSE_FULL

from .harness import Harness

WATCHERS = list(range(100, 105))


def _watched() -> tuple[Harness, list[int]]:
    """A started table of three players and five spectators."""
    h = Harness(seats=3)
    players = h.started()
    for conn in WATCHERS:
        h.say(conn, type="hello")
    return h, players


def test_a_broadcast_reaches_every_spectator_as_one_message_encoded_once() -> None:
    h, players = _watched()
    out = h.say(h.game.to_move + 1, type="reveal")
    fanouts = [s for s in out.sends if isinstance(s, Fanout)]
    assert len(fanouts) == 1
    assert sorted(fanouts[0].conns) == WATCHERS
    assert isinstance(fanouts[0].message, bytes)  # the table's own encoding, made once
    to_one = [s.conn for s in out.sends if isinstance(s, Send)]
    assert sorted(to_one) == players  # nobody watching has a message of their own
    for conn in WATCHERS:
        assert h.last(conn, "reveal")["turn"] == 1
        assert h.wires[conn].public == h.table.view_of(None)


def test_every_kind_of_broadcast_fans_out_to_the_spectators() -> None:
    h = Harness(seats=2, remove=100)  # a short game: it ends soon
    for conn in WATCHERS:
        h.say(conn, type="hello")
    before = len(h.fanouts)
    h.started()
    while not h.game.over:
        h.open_round()
        while h.game.round is not None:
            for seat in (0, 1):
                if h.game.round is not None and not h.game.seat_complete(seat):
                    h.say(seat + 1, type="done")
    kinds = {h.raw[WATCHERS[0]][i]["type"] for i in range(len(h.raw[WATCHERS[0]]))}
    assert {"welcome", "started", "reveal", "round", "over"} <= kinds
    assert all(sorted(f.conns) == WATCHERS for f in h.fanouts[before:])
    assert h.raw[WATCHERS[0]][1:] == h.raw[WATCHERS[-1]][1:]  # every spectator told the same


def test_the_spectators_of_a_nodes_tables_share_one_cap() -> None:
    audience = Audience(3)
    a = Harness(code="TABLEA", table={"audience": audience})
    b = Harness(code="TABLEB", table={"audience": audience})
    a.say(100, type="hello")
    a.say(101, type="hello")
    b.say(200, type="hello")
    b.say(201, type="hello")  # the node has three: the fourth is refused, wherever it asks
    assert b.last(201, "error")["code"] == "spectators_full"
    assert b.closed[201] == Close(201, CLOSE_FULL, "spectators_full")
    assert b.table.info().spectators == 1 and audience.count == 3
    a.gone(100)  # one leaves table A: there is room at table B again
    b.say(202, type="hello")
    assert b.last(202, "welcome")["seat"] is None
    assert audience.count == 3


def test_a_spectator_coming_and_going_tells_nobody_else() -> None:
    h, _ = _watched()
    out = h.say(200, type="hello")
    assert {s.conn for s in out.sends if isinstance(s, Send)} == {200}
    assert not any(isinstance(s, Fanout) for s in out.sends)
    assert h.table.info().spectators == len(WATCHERS) + 1
    out = h.gone(200)
    assert out.sends == []
    assert h.table.info().spectators == len(WATCHERS)


def test_a_player_who_leaves_watches_and_counts_as_a_spectator_until_gone() -> None:
    audience = Audience(1)
    h = Harness(seats=2, table={"audience": audience})
    ana = h.say(1, type="hello", token=h.tokens[0]) and 1
    h.say(ana, type="leave")
    assert ana in h.table.watchers and audience.count == 1
    h.say(9, type="hello")  # the node is full: the player who left is watching
    assert h.last(9, "error")["code"] == "spectators_full"
    h.gone(ana)
    assert audience.count == 0


def test_a_table_let_go_to_another_node_frees_its_spectators_places() -> None:
    audience = Audience(10)
    h, _ = _watched()
    h.table.audience = audience
    audience.count = len(WATCHERS)
    h.table.let_go()
    assert audience.count == 0 and h.table.watchers == {}


def test_spectators_are_told_the_hands_at_most_every_half_second_and_lose_nothing() -> None:
    h, players = _watched()
    h.open_round(least=2)
    hands_before = h.kinds(WATCHERS[0]).count("hands")
    card = h.allowed_card()
    h.now += 300  # a human's reaction after the reveal
    for conn in players[:2]:  # two hands 150 ms apart: the players hear of each
        h.say(conn, type="slap", card=card.text, ms=400 + conn)
        h.run_until_idle(h.now + 150)
    assert h.kinds(players[2]).count("hands") >= 2
    assert h.kinds(WATCHERS[0]).count("hands") - hands_before <= 1  # the spectators, once
    h.run_until_idle(h.now + WATCH_HANDS_MS)  # the hands held back go out in time
    assert h.table.watch_due is None
    laid = h.table.view_of(None)["round"]["laid"]
    for conn in WATCHERS:
        assert h.wires[conn].public is not None and h.wires[conn].public["round"]["laid"] == laid
    h.say(500, type="hello")  # a spectator coming in now is shown what the others hold
    assert h.last(500, "welcome")["view"] == h.wires[WATCHERS[0]].public
