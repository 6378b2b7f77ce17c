"""The sans-I/O table: arbitration as the table applies it, timers, store-then-tell and
restoring — all synchronous, on a clock the test sets."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from flyswat import bots
from flyswat.arbiter import JITTER_MS
from flyswat.bots import PlannedSlap
from flyswat.record import verify_record
from flyswat.table import context
from flyswat.table import events as ev
from flyswat.table.core import Table
from flyswat.table.io import Gone, Outcome, Sources
from flyswat.table.turns import HANDS_EVERY_MS

from .harness import Harness


def test_the_faster_reaction_is_underneath_even_when_it_arrives_later() -> None:
    h = Harness()
    ana, bruno, carla = h.started()
    h.rtt(ana, 1.0)  # Ana: a fast link, allowance 1 ms + JITTER_MS
    h.rtt(bruno, 100.0)  # Bruno: a slow one, allowance 100 ms + JITTER_MS
    h.open_round()
    card, sent = h.allowed_card(), h.now
    h.now = sent + 400
    h.say(ana, type="slap", card=card.text, ms=400)  # E = 400: Ana's 400 stands
    h.now = sent + 450
    h.say(bruno, type="slap", card=card.text, ms=330)  # E = 450, A = 100 + JITTER_MS
    assert h.last(bruno, "accepted")["ms"] == round(450 - 100 - JITTER_MS)
    h.say(ana, type="done")
    h.say(bruno, type="done")
    assert h.game.round is not None  # Carla could still slap underneath
    h.say(carla, type="done")
    closed = h.last(carla, "round")["view"]["last_round"]
    assert closed["slaps"][:2] == [{"seat": 1, "card": card.text}, {"seat": 0, "card": card.text}]
    assert {"seat": 1, "card": card.text} in closed["won"]
    assert h.last(ana, "round") == h.last(bruno, "round") | {"view": h.last(ana, "round")["view"]}


def test_a_claim_beyond_the_allowance_loses_to_the_earlier_arrival() -> None:
    h = Harness()
    ana, bruno, carla = h.started()
    h.rtt(ana, 1.0)
    h.rtt(bruno, 1.0)
    h.open_round()
    card, sent = h.allowed_card(), h.now
    h.now = sent + 400
    h.say(ana, type="slap", card=card.text, ms=400)
    h.now = sent + 450
    h.say(bruno, type="slap", card=card.text, ms=200)  # the network explains 1 ms + jitter
    assert h.last(bruno, "accepted")["ms"] == round(450 - 1 - JITTER_MS)
    for conn in (ana, bruno, carla):
        h.say(conn, type="done")
    assert h.last(bruno, "round")["view"]["last_round"]["won"][0] == {"seat": 0, "card": card.text}


def test_r21_the_round_closes_once_no_missing_slap_can_count() -> None:
    h = Harness(slap_window_ms=600)
    conns = h.started()
    for conn in conns:
        h.rtt(conn, 50.0 - JITTER_MS)  # allowance 50 ms each
    h.open_round()
    game, sent = h.game, h.now
    h.say(conns[0], type="done")
    h.at(sent + HANDS_EVERY_MS)  # the hand counts go out; then the round waits for the rest
    assert h.table.wake_at == sent + 650  # window 600 + allowance 50
    h.at(sent + 649.9)
    assert game.round is not None
    h.at(sent + 650)  # a hand at the window's edge is too late (R21): nothing can count now
    assert game.round is None
    assert h.last(conns[0], "round")["turn"] == len(game.turns)


def test_r21_a_slap_at_the_window_edge_is_too_late() -> None:
    h = Harness(slap_window_ms=600)
    ana, *_ = h.started()
    h.open_round()
    card, sent = h.allowed_card(), h.now
    h.now = sent + 600  # no RTT measured yet: no allowance beyond what the server saw
    h.say(ana, type="slap", card=card.text)
    assert h.last(ana, "error")["code"] == "too_late"


def test_bot_slaps_take_their_planned_time_in_the_same_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    plan = lambda level, v, rng: [PlannedSlap(v.centre[0], 300)]  # noqa: E731
    monkeypatch.setattr(bots, "decide", plan)
    h = Harness(seats=2, bots=[{"seat": 1, "level": "hard"}])
    (ana,) = h.started()
    h.rtt(ana, 1.0)
    game = h.game
    while game.round is None:
        if game.to_move == 0:
            h.say(ana, type="reveal")
        else:
            h.at(h.table.wake_at or h.now)  # the bot reveals when its pause is over
    target, sent = game.centre[0], h.now
    h.now = sent + 290
    h.say(ana, type="slap", card=target.text, ms=290)
    assert ev.Slapped(turn=len(game.turns), seat=0, card=target.text, ms=290) in h.stored
    h.say(ana, type="done")
    assert game.round is not None  # the bot's planned hand is still to land
    h.at(sent + 300)
    closed = h.last(ana, "round")["view"]["last_round"]
    assert closed["slaps"] == [{"seat": 0, "card": target.text}, {"seat": 1, "card": target.text}]
    last = ev.Slapped(turn=len(game.turns), seat=1, card=target.text, ms=300, done=True)
    assert last in h.stored  # the bot's last hand says done with it: no SaidDone of its own
    assert not [e for e in h.stored if isinstance(e, ev.SaidDone) and e.seat == 1]


def test_messages_say_how_long_the_turn_and_the_window_have_left() -> None:
    h = Harness()
    ana, *_ = h.started()
    assert h.last(ana, "started")["turn_deadline_ms"] == 60_000
    game, late = h.game, 100
    while True:
        h.say(game.to_move + 1, type="reveal")
        shown = h.last(ana, "reveal")
        if game.round is not None:
            break
        if shown["round"]:
            assert h.last(ana, "round")["turn_deadline_ms"] == 60_000
        else:
            assert shown["turn_deadline_ms"] == 60_000
        h.now += 1000
        late += 1
        h.say(late, type="hello")
        assert h.last(late, "welcome")["turn_deadline_ms"] == 59_000
        assert h.last(late, "welcome")["window_left_ms"] is None
    assert shown["turn_deadline_ms"] is None
    h.now += 500
    h.say(late + 1, type="hello")
    welcome = h.last(late + 1, "welcome")
    assert (welcome["window_left_ms"], welcome["turn_deadline_ms"]) == (29_500, None)


def test_a_player_who_drops_during_a_round_is_not_waited_for() -> None:
    h = Harness()
    ana, bruno, carla = h.started()
    h.open_round()
    h.say(ana, type="done")
    h.say(bruno, type="done")
    assert h.game.round is not None
    h.gone(carla)
    assert h.game.round is None
    assert h.last(ana, "round")["turn"] == h.last(bruno, "round")["turn"]


def test_the_turn_timeout_reveals_for_an_absent_player() -> None:
    h = Harness(turn_timeout_ms=4000)
    ana, *_ = h.started()
    mover = h.game.to_move
    h.at(h.now + 3999)
    assert len(h.game.turns) == 0
    h.at(h.now + 1)
    shown = h.last(ana, "reveal")
    assert (shown["seat"], shown["auto"]) == (mover, True)


# -- the view during a round ---------------------------------------------------------------


def test_r16_the_view_shows_the_hands_laid_during_a_round_and_only_ones_own_cards() -> None:
    h = Harness()
    ana, bruno, _carla = h.started()
    centre = h.open_round(least=2)
    h.now += 300  # a human's reaction time
    h.say(ana, type="slap", card=centre[0].text, ms=300)
    h.say(bruno, type="slap", card=centre[1].text, ms=300)
    assert not any(m["type"] == "hands" for m in h.told[ana])  # coalesced: not yet
    h.at(h.now + HANDS_EVERY_MS)
    assert [m["type"] for m in h.told[ana]].count("hands") == 1  # both hands in one message
    mine = h.last(ana, "hands")["view"]["round"]
    assert mine["laid"] == [1, 1, 0] and mine["mine"] == [centre[0].text]
    assert h.last(bruno, "hands")["view"]["round"]["mine"] == [centre[1].text]


def test_r21_done_twice_is_refused_and_tells_nobody_again() -> None:
    h = Harness()
    ana, bruno, _ = h.started()
    h.open_round()
    h.say(ana, type="done")
    told = len(h.told[bruno])
    h.say(ana, type="done")
    assert h.last(ana, "error")["code"] == "done"
    assert len(h.told[bruno]) == told


def test_r21_a_slap_that_says_done_is_the_slap_then_the_done_in_one_message() -> None:
    h = Harness()
    ana, bruno, carla = h.started()
    h.open_round(least=2)
    card = h.allowed_card()
    h.now += 300
    out = h.say(ana, type="slap", card=card.text, ms=300, done=True)
    assert [(type(e), e.done) for e in out.events] == [(ev.Slapped, True)]  # one event
    assert h.last(ana, "accepted")["card"] == card.text
    back, _ = Table.restore("TESTAB", h.stored, Sources.fixed(), h.now)
    assert back.view_of(0)["round"]["done"] is True  # stored as said
    h.say(ana, type="done")  # the seat already said it
    assert h.last(ana, "error")["code"] == "done"
    h.say(bruno, type="slap", card=card.text, ms=320, done=True)
    assert h.game.round is not None  # Carla could still slap
    h.say(carla, type="slap", card=card.text, ms=340, done=True)  # the last waited: decided
    closed = h.last(carla, "round")["view"]["last_round"]
    assert [s["seat"] for s in closed["slaps"]] == [0, 1, 2]


def test_r21_a_slap_that_says_done_with_the_seats_last_hand_is_done_too() -> None:
    h = Harness()
    ana, *_ = h.started()
    centre = h.open_round(least=2)
    h.now += 300
    h.say(ana, type="slap", card=centre[0].text, ms=300)
    out = h.say(ana, type="slap", card=centre[1].text, ms=300, done=True)  # the last of two
    assert [(type(e), e.done) for e in out.events] == [(ev.Slapped, True)]
    h.at(h.now + HANDS_EVERY_MS)
    assert h.last(ana, "hands")["view"]["round"]["done"] is True  # as a done after it would say
    h.say(ana, type="done")
    assert h.last(ana, "error")["code"] == "done"


def test_r21_a_refused_slap_that_says_done_changes_nothing() -> None:
    h = Harness()
    ana, *_ = h.started()
    h.open_round(least=2)
    card = h.allowed_card()
    h.now += 50  # under MIN_HUMAN_MS: refused, and so is its done
    out = h.say(ana, type="slap", card=card.text, ms=50, done=True)
    assert h.last(ana, "error")["code"] == "too_fast"
    assert not any(isinstance(e, ev.SaidDone | ev.Slapped) for e in out.events)
    h.now += 300
    h.say(ana, type="slap", card=card.text, ms=300)  # still in the round, hands and all
    assert h.last(ana, "accepted")["card"] == card.text


# -- store, then tell; restore by the same code --------------------------------------------


def test_an_accepted_slap_is_stored_in_the_same_step_it_is_told() -> None:
    h = Harness()
    ana, *_ = h.started()
    card = h.open_round()[0]
    h.now += 300
    out = h.say(ana, type="slap", card=card.text, ms=300)
    assert [type(e) for e in out.events] == [ev.Slapped]
    told = next(s.message for s in out.sends if s.conn == ana)
    assert isinstance(told, bytes) and json.loads(told)["type"] == "accepted"


def test_a_restored_table_is_the_table_that_stored_its_events() -> None:
    h = Harness()
    ana, bruno, _carla = h.started()
    centre = h.open_round(least=2)
    h.now += 300
    h.say(ana, type="slap", card=centre[0].text, ms=300)
    h.say(bruno, type="done")
    back, out = Table.restore("TESTAB", h.stored, Sources.fixed(), h.now)
    assert back.view_of(0) == h.table.view_of(0)  # its accepted hand included
    assert back.view_of(None) == h.table.view_of(None)
    game = back.game
    assert game is not None and game.round is not None
    assert [s.seat for s in game.round.slaps] == [0] and 1 in game.round.done
    assert back.wake_at is not None  # the round resumes, with a fresh window
    assert out.sends == []


def _play_to_the_end(h: Harness, ana: int) -> Iterator[None]:
    """Ana reveals and says done against a bot until the game is over (at most 400 steps),
    yielding after each step."""
    for _ in range(400):
        if h.table.state == "over":
            return
        game = h.game
        if game.round is None and game.to_move == 0:
            h.say(ana, type="reveal")
        elif game.round is not None and not game.seat_complete(0):
            h.say(ana, type="done")
        else:
            h.at(h.table.wake_at or h.now)
        yield


def test_every_message_that_shows_the_game_comes_after_its_event_is_stored() -> None:
    h = Harness(seats=2, bots=[{"seat": 1, "level": "normal"}], remove=90)
    (ana,) = h.started()
    for _ in _play_to_the_end(h, ana):
        replayed, _ = Table.restore("TESTAB", h.stored, Sources.fixed(), h.now)
        assert replayed.view_of(0) == h.table.view_of(0)
    assert h.table.state == "over" and isinstance(h.stored[-1], ev.Over)
    record = h.stored[-1].record_dict()  # type: ignore[attr-defined]
    assert h.last(ana, "over")["result"] == record["result"]


def test_a_finished_table_keeps_its_record_as_text_and_no_command_outcome_between_commands() -> (
    None
):
    """What the collector would walk (docs/BENCHMARKS.md, *The burst's survivors*): a finished
    game's record is kept as its JSON text, the same text its ``over`` event stores; and a
    table keeps no command's outcome once it is handed over, nor takes an event between
    commands."""
    h = Harness(seats=2, bots=[{"seat": 1, "level": "normal"}], remove=90)
    (ana,) = h.started()
    out = h.table.handle(Gone(ana + 1000), h.now)  # any command: an unknown connection
    between = h.table.out
    assert between is not out and not between.events and not between.sends
    # An event, a message or a close outside a command: a bug, failing loudly.
    with pytest.raises(RuntimeError, match="outside a command"):
        h.table.emit(ev.Expired())
    with pytest.raises(RuntimeError, match="outside a command"):
        h.table.send(ana, b"{}")
    with pytest.raises(RuntimeError, match="outside a command"):
        h.table.close(ana, 1000, "")
    assert h.table.state == "playing" and not (between.events or between.sends or between.closes)
    for _ in _play_to_the_end(h, ana):
        pass
    over = h.stored[-1]
    assert isinstance(over, ev.Over) and isinstance(h.table.record, str)
    assert h.table.record == over.record
    record = json.loads(h.table.record)
    assert record == over.record_dict() and record["id"] == h.table.game_id
    verify_record(record)


def test_a_games_end_is_stored_and_told_after_its_last_round_and_a_restore_between_ends_it() -> (
    None
):
    h = Harness(seats=2, bots=[{"seat": 1, "level": "normal"}], remove=90)
    (ana,) = h.started()
    last: Outcome | None = None
    for _ in range(400):
        if h.table.state == "over":
            break
        game = h.game
        if game.round is None and game.to_move == 0:
            last = h.say(ana, type="reveal")
        elif game.round is not None and not game.seat_complete(0):
            last = h.say(ana, type="done")
        else:
            last = h.at(h.table.wake_at or h.now)
    assert h.table.state == "over" and last is not None
    before, end = last.parts()
    # The last play first (its events and messages), stored alone; then the end: its event
    # and message.
    assert not any(isinstance(e, ev.Over) for e in before.events)
    assert any(isinstance(e, ev.Over) for e in end.events)

    def kinds(out: Outcome) -> list[str]:
        return [json.loads(m)["type"] if isinstance(m := s.message, bytes) else m.type  # type: ignore[attr-defined]
                for s in out.sends]  # fmt: skip

    assert kinds(before) and "over" not in kinds(before)  # the last card's reveal, or round
    assert "over" in kinds(end) and not set(kinds(before)) & set(kinds(end))
    assert [e.kind for e in before.events + end.events] == [e.kind for e in last.events]
    assert len(before.sends) + len(end.sends) == len(last.sends)
    # A node that died between the two commits ends the game when it restores the table,
    # with the same record.
    stored = h.stored[: len(h.stored) - len(end.events)]
    back, out = Table.restore("TESTAB", stored, Sources.fixed(), h.now)
    over = [e for e in out.events if isinstance(e, ev.Over)]
    assert back.state == "over" and len(over) == 1
    assert over[0].record == h.stored[-1].record  # type: ignore[attr-defined]


def test_an_outcome_without_a_games_end_is_stored_and_told_whole() -> None:
    h = Harness()
    ana, *_ = h.started()
    out = h.say(ana, type="ready", ready=True)
    assert out.parts() == (out,)


# -- the lobby -----------------------------------------------------------------------------


def test_a_lobby_nobody_is_at_expires_and_cannot_be_joined() -> None:
    h = Harness()
    h.at(h.now + context.LOBBY_TTL_MS)
    assert h.table.state == "expired" and isinstance(h.stored[-1], ev.Expired)
    from flyswat.errors import IllegalActionError
    from flyswat.table.io import Join

    with pytest.raises(IllegalActionError) as refused:
        h.do(Join("Late"))
    assert refused.value.code == "expired"


def test_a_lobby_with_someone_connected_does_not_expire() -> None:
    h = Harness()
    h.say(1, type="hello", token=h.tokens[0])
    h.at(h.now + 2 * context.LOBBY_TTL_MS)
    assert h.table.state == "lobby"


def test_a_too_fast_claim_is_counted_and_changes_nothing_else() -> None:
    h = Harness()
    ana, bruno, _ = h.started()
    card = h.open_round()[0]
    h.now += 400
    out = h.say(ana, type="slap", card=card.text, ms=50)
    assert h.last(ana, "error")["code"] == "too_fast"
    assert [type(e) for e in out.events] == [ev.TooFast]  # stored: it counts against Ana
    assert h.game.round is not None and h.game.round.slaps == []
    assert h.last(bruno, "table")["table"]["players"][0]["too_fast"] == 1
