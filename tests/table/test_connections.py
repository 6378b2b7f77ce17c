"""The connection rules, sans I/O: hello first, one live socket per seat, spectators watch,
limits per connection and per seat."""

from __future__ import annotations

from flyswat.table import context, sessions
from flyswat.table import events as ev
from flyswat.table.core import Table
from flyswat.table.io import Join, Sources
from flyswat.table.sessions import CLOSE_POLICY, CLOSE_REPLACED

from .harness import Harness


def test_hello_comes_first() -> None:
    h = Harness()
    h.say(7, type="ready")
    assert h.last(7, "error")["code"] == "hello_first"
    h.say(7, type="hello", token=h.tokens[0])
    assert h.last(7, "welcome")["seat"] == 0
    h.say(7, type="hello", token=h.tokens[0])
    assert h.last(7, "error")["code"] == "already_hello"


def test_a_bad_token_is_refused_and_seats_nobody() -> None:
    h = Harness()
    h.say(7, type="hello", token="not-a-token")
    assert h.last(7, "error")["code"] == "bad_token"
    assert h.table.conns == {}


def test_spectators_watch_and_cannot_act() -> None:
    h = Harness()
    h.say(9, type="hello")
    assert h.last(9, "welcome")["seat"] is None
    for message in ({"type": "ready"}, {"type": "start"}, {"type": "reveal"}):
        h.say(9, **message)
        assert h.last(9, "error")["code"] == "spectator"


def test_a_seat_has_one_live_socket_and_a_new_hello_takes_it_over() -> None:
    h = Harness()
    h.say(1, type="hello", token=h.tokens[0])
    h.say(2, type="hello", token=h.tokens[0])
    assert h.last(1, "error")["code"] == "replaced"
    assert h.closed[1].code == CLOSE_REPLACED
    assert h.table.seats[0].conn == 2 and set(h.table.conns) == {2}
    h.gone(1)  # the old socket's close changes nothing for the new one
    assert h.table.seats[0].connected


def test_a_seat_is_rate_limited_across_its_sockets() -> None:
    h = Harness(seats=3)
    h.seat_everyone()
    refused = 0
    for i in range(200):  # new sockets of one seat, each toggling ready
        conn = 100 + i
        h.say(conn, type="hello", token=h.tokens[1])
        h.say(conn, type="ready", ready=i % 2 == 0)
        refused += any(m.get("code") == "rate_limited" for m in h.told.get(conn, []))
    assert refused > 100  # all at one instant: the seat's bucket holds 40


def test_a_connection_that_keeps_erring_is_closed() -> None:
    h = Harness()
    h.say(1, type="hello", token=h.tokens[0])
    for _ in range(25):
        h.now += 100  # slow enough for the rate limit, not for the error count
        h.say(1, type="nonsense")
    assert h.closed[1].code == CLOSE_POLICY
    assert 1 not in h.table.conns


def test_a_connection_that_errs_before_hello_is_closed_too() -> None:
    h = Harness()
    for _ in range(25):
        h.say(5, type="ready")
    assert h.closed[5].code == CLOSE_POLICY


def test_a_table_takes_a_bounded_number_of_spectators() -> None:
    h = Harness()
    for conn in range(100, 100 + context.MAX_SPECTATORS):
        h.say(conn, type="hello")
    late = 100 + context.MAX_SPECTATORS
    h.say(late, type="hello")
    assert h.last(late, "error")["code"] == "spectators_full" and late in h.closed
    assert h.table.info().spectators == context.MAX_SPECTATORS


def test_strict_messages_a_string_is_not_a_number_and_a_number_is_not_a_boolean() -> None:
    h = Harness()
    ana, *_ = h.started()
    card = h.open_round()[0]
    for bad in ({"ms": "300"}, {"ms": True}, {"turn": "5"}, {"ms": 300.5}):
        h.say(ana, type="slap", card=card.text, **bad)
        assert h.last(ana, "error")["code"] == "malformed"
    assert h.game.round is not None and h.game.round.slaps == []
    assert h.table.seats[0].too_fast == 0


def test_a_seat_taken_over_mid_round_is_still_waited_for() -> None:
    h = Harness()
    ana, bruno, carla = h.started()
    card = h.open_round()[0]
    h.say(ana, type="done")
    h.say(bruno, type="done")
    h.say(10 + carla, type="hello", token=h.tokens[2])  # Carla's new tab takes the seat over
    assert h.closed[carla].code == CLOSE_REPLACED
    assert h.game.round is not None  # the round still waits for Carla
    h.now += 400
    h.say(10 + carla, type="slap", card=card.text, ms=400)
    assert h.last(10 + carla, "accepted")["card"] == card.text


def test_a_lobby_seat_whose_holder_never_comes_is_given_up() -> None:
    h = Harness(seats=3)
    h.say(1, type="hello", token=h.tokens[0])  # the host is there
    squatter = h.do(Join("Squat")).reply  # joins by HTTP, never connects
    h.at(h.now + context.SEAT_TTL_MS - 1)
    assert h.table.seats[squatter[0]].joined
    h.at(h.now + 1)
    assert not h.table.seats[squatter[0]].joined and isinstance(h.stored[-1], ev.Released)
    assert h.last(1, "table")["table"]["players"][squatter[0]]["joined"] is False
    assert h.do(Join("Real")).reply[0] == squatter[0]  # free for somebody who plays
    h.say(5, type="hello", token=squatter[1])
    assert h.last(5, "error")["code"] == "bad_token"  # the old token holds nothing now


def test_a_lobby_seat_whose_holder_is_connected_is_kept() -> None:
    h = Harness(seats=2)
    seat, token = h.do(Join("Bruno")).reply
    h.say(2, type="hello", token=token)
    h.at(h.now + 10 * context.SEAT_TTL_MS)
    assert h.table.seats[seat].joined and h.table.state == "lobby"


def test_a_slow_link_whose_slaps_cross_every_round_close_is_not_closed() -> None:
    """R21 and the error limit: a seat whose slap and done reach the table after each round
    closed (a slow link) gets ``stale_round`` every time, well over 20 times in 10 s, and
    keeps its socket: only errors a fair client does not make count toward 1008."""
    h = Harness(slap_window_ms=600)
    ana, bruno, carla = h.started()
    refused = 0
    for _ in range(15):
        assert carla not in h.closed, f"closed after {refused} late messages"
        card = h.open_round()[0]
        turn = len(h.game.turns)
        h.say(ana, type="done")
        h.say(bruno, type="done")
        h.say(carla, type="done")  # the round closes before Carla's late hand arrives
        h.now += 200
        for message in ({"type": "slap", "card": card.text, "ms": 400, "turn": turn},
                        {"type": "done", "turn": turn}):  # fmt: skip
            h.say(carla, **message)
            refused += h.last(carla, "error")["code"] == "stale_round"
    assert refused == 30
    assert carla not in h.closed and h.table.seats[2].connected
    for _ in range(25):  # errors a fair client never makes still close it
        h.now += 100
        h.say(carla, type="nonsense")
    assert h.closed[carla].code == CLOSE_POLICY


def test_a_player_who_drops_mid_round_and_is_back_in_its_window_plays_on_in_it() -> None:
    """A dropped seat is not waited for (as done), but one back while its slap window is
    open lays hands again (PROTOCOL.md, *Reconnection and restarts*)."""
    h = Harness(seats=3, slap_window_ms=8000)
    h.started()
    h.open_round()
    turn = len(h.game.turns)
    h.gone(2)
    assert 1 in h.game.round.done and isinstance(h.stored[-1], ev.Away)
    h.now += 500
    h.say(2, type="hello", token=h.tokens[1])
    assert isinstance(h.stored[-1], ev.Back)
    assert h.last(2, "welcome")["view"]["round"]["done"] is False
    h.say(2, type="slap", card=h.allowed_card().text, ms=400, turn=turn)
    assert h.kinds(2)[-1] == "accepted" and h.game.round.hands_of(1)


def test_a_player_back_after_its_window_stays_out_of_the_round_and_is_told_why() -> None:
    """Back once its window has passed (the others still in theirs), a dropped seat's slaps
    are refused ``done``, and the message says it was away, not that it said done."""
    h = Harness(seats=3, slap_window_ms=8000, deliver=False)
    h.started()
    h.open_round()
    turn = len(h.game.turns)
    clock = h.table.clock
    assert clock is not None
    for seat in (0, 2):  # the others' sockets were handed the trigger later than Bruno's
        clock.delivered(seat, h.now + 5000)
    h.gone(2)
    h.now += 9000  # past Bruno's window, within the others'
    h.say(2, type="hello", token=h.tokens[1])
    assert not any(isinstance(e, ev.Back) for e in h.stored)
    assert h.game.round is not None and h.last(2, "welcome")["view"]["round"]["done"] is True
    h.say(2, type="slap", card=h.allowed_card().text, ms=400, turn=turn)
    refusal = h.last(2, "error")
    assert refusal["code"] == "done" and "away" in refusal["message"]


def test_a_seat_away_when_the_server_stopped_gets_a_fresh_window_at_the_restart() -> None:
    """After a restart every seat still to complete the open round is waited for, connected
    yet or not: one that had dropped out of it (``away``) too, for it never said done."""
    h = Harness(seats=3, slap_window_ms=8000)
    h.started()
    h.open_round()
    h.gone(2)
    later = h.now + 60_000  # long past the round's window: the server was down meanwhile
    rebuilt, out = Table.restore("TESTAB", h.stored, Sources.fixed(), later)
    game, clock = rebuilt.game, rebuilt.clock
    assert game is not None and game.round is not None and clock is not None
    assert 1 not in game.round.done and clock.waits_for(1)
    assert any(isinstance(e, ev.Back) and e.seat == 1 for e in out.events)


def test_a_round_with_a_player_back_is_rebuilt_the_same_from_the_store() -> None:
    """``away`` and ``back`` are stored: the table rebuilt from its events has the seat in
    play in the round again."""
    h = Harness(seats=3, slap_window_ms=8000)
    h.started()
    h.open_round()
    h.gone(2)
    h.say(2, type="hello", token=h.tokens[1])
    rebuilt, _ = Table.restore("TESTAB", h.stored, Sources.fixed(), h.now)
    assert rebuilt.game is not None and rebuilt.game.round is not None
    assert 1 not in rebuilt.game.round.done and 1 not in rebuilt.game.round.away


def test_a_seat_that_keeps_dropping_comes_back_into_a_round_a_bounded_number_of_times() -> None:
    """Each drop and return is stored (``away``, ``back``): a seat that drops and reconnects
    over and over in one round comes back at most :data:`sessions.BACKS_A_ROUND` times, so
    that it cannot fill the table's log; after that it stays out of the round, told why."""
    h = Harness(seats=3, slap_window_ms=8000)
    h.started()
    h.open_round()
    turn = len(h.game.turns)
    conn = 2
    for _ in range(20):
        h.gone(conn)
        conn += 10  # a new socket each time
        h.now += 400  # past the seat's rate limit, within the round's window
        h.say(conn, type="hello", token=h.tokens[1])
    backs = [e for e in h.stored if isinstance(e, ev.Back)]
    aways = [e for e in h.stored if isinstance(e, ev.Away)]
    assert len(backs) == sessions.BACKS_A_ROUND and len(aways) == sessions.BACKS_A_ROUND + 1
    h.say(conn, type="slap", card=h.allowed_card().text, ms=400, turn=turn)
    assert h.last(conn, "error")["code"] == "done"
