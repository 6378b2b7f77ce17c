"""What each seat may see (R8, R25): the view is the only thing a transport may send."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import random
from collections.abc import Callable
from typing import Any

import pytest

from flyswat import Card, Game, IllegalActionError, MalformedError, Rules, View, view
from flyswat.view import view_json

Stage = Callable[..., Game]

C = Card.parse


def cards_in(data: Any) -> set[Card]:
    """Every card named anywhere in a JSON-ready value."""
    found: set[Card] = set()
    if isinstance(data, str):
        with contextlib.suppress(MalformedError):
            found.add(C(data))
    elif isinstance(data, dict):
        for value in data.values():
            found |= cards_in(value)
    elif isinstance(data, list | tuple):
        for value in data:
            found |= cards_in(value)
    return found


def sent(game: Game, seat: int | None) -> dict[str, Any]:
    """The view exactly as a transport would send it: through JSON."""
    out: dict[str, Any] = json.loads(json.dumps(view(game, seat).to_json()))
    return out


def draw_cards(game: Game) -> set[Card]:
    return {c for pile in game.draw for c in pile}


# Two seats. Seat 0 wins R1-1 in the first round (S-1, revealed by seat 1); then Y1-1 Y1-2 G1-1,
# and seat 1's S-2 opens a round in which seat 1 has laid one hand on Y1-1.
SCRIPT = ["R1-1", "S-1", "Y1-1", "Y1-2", "G1-1", "S-2"]


def _mid_round(staged: Stage, remove: int = 0) -> Game:
    game = staged(2, SCRIPT, remove=remove)
    game.reveal()
    game.reveal()
    game.slap(0, C("R1-1"))
    game.close_round()
    for _ in range(4):
        game.reveal()
    game.slap(1, C("Y1-1"))
    return game


def _over(staged: Stage) -> Game:
    game = staged(2, SCRIPT, sizes={1: 3}, remove=5)  # S-2 is seat 1's last card
    game.reveal()
    game.reveal()
    game.slap(0, C("R1-1"))
    game.close_round()
    for _ in range(4):
        game.reveal()
    game.slap(1, C("Y1-1"))
    game.slap(0, C("G1-1"))
    game.close_round()
    assert game.over
    return game


@pytest.mark.parametrize("seat", [0, 1, None])
def test_r8_nobody_sees_a_card_of_a_draw_pile_only_how_many_there_are(
    staged: Stage, seat: int | None
) -> None:
    game = _mid_round(staged)
    out = sent(game, seat)
    assert cards_in(out).isdisjoint(draw_cards(game))
    assert out["draw_counts"] == [len(p) for p in game.draw]


@pytest.mark.parametrize("seat", [0, 1, None])
def test_r25_everyone_sees_the_centre_the_box_and_every_pile_count(
    staged: Stage, seat: int | None
) -> None:
    game = _mid_round(staged)
    v = view(game, seat)
    assert v.centre == tuple(game.centre) == (C("Y1-1"), C("Y1-2"), C("G1-1"))
    assert v.box == (C("S-1"),)
    assert v.won_counts == (1, 0)
    assert v.draw_counts == tuple(len(p) for p in game.draw)
    assert (v.seats, v.hands, v.to_move, v.turn) == (2, 2, 0, 6)
    assert v.last_card is C("S-2")


def test_r25_a_won_pile_shows_its_cards_to_its_owner_only(staged: Stage) -> None:
    game = _mid_round(staged)
    assert view(game, 0).won == (C("R1-1"),)
    assert view(game, 1).won == ()
    assert view(game, None).won == ()
    assert [sent(game, seat)["won"] for seat in (0, 1, None)] == [["R1-1"], [], []]


def test_r25_during_an_open_round_a_seat_sees_its_own_hands_and_only_counts_of_others(
    staged: Stage,
) -> None:
    game = _mid_round(staged)
    mine, theirs = view(game, 1).round, view(game, 0).round
    assert mine is not None
    assert theirs is not None
    assert (mine.trigger, mine.seat, mine.laid, mine.mine) == (C("S-2"), 1, (0, 1), (C("Y1-1"),))
    assert (theirs.laid, theirs.mine) == ((0, 1), ())
    # Y1-1 is in the centre, so it is named in seat 0's view — but never as a hand.
    assert sent(game, 0)["round"] == {
        "trigger": "S-2",
        "seat": 1,
        "laid": [0, 1],
        "mine": [],
        "done": False,
    }


def test_r25_the_allowed_colours_are_not_shown_while_the_round_is_open(staged: Stage) -> None:
    game = _mid_round(staged)
    out = sent(game, 0)
    assert "allowed" not in out["round"]
    assert out["last_round"]["trigger"] == "S-1"  # the previous round, already public


def test_r25_a_closed_round_is_public_slaps_wins_penalties_and_allowed_colours(
    staged: Stage,
) -> None:
    game = _mid_round(staged)
    game.slap(0, C("G1-1"))
    game.slap(0, C("Y1-1"))
    game.close_round()
    for seat in (0, 1, None):
        last = sent(game, seat)["last_round"]
        assert last == {
            "trigger": "S-2",
            "seat": 1,
            "allowed": ["Y"],
            "slaps": [
                {"seat": 1, "card": "Y1-1"},
                {"seat": 0, "card": "G1-1"},
                {"seat": 0, "card": "Y1-1"},
            ],
            "won": [{"seat": 1, "card": "Y1-1"}],
            "penalties": [{"seat": 0, "card": "R1-1"}],
        }
    # The penalty card is in seat 0's draw pile now, but a closed round is public record.
    assert C("R1-1") in draw_cards(game)


def test_r25_a_seat_sees_whether_it_said_it_is_done(staged: Stage) -> None:
    game = _mid_round(staged)
    game.done(0)
    assert view(game, 0).round is not None
    assert view(game, 0).round.done  # type: ignore[union-attr]
    assert not view(game, 1).round.done  # type: ignore[union-attr]


def test_r6_r25_cards_removed_before_the_deal_stay_unseen_while_the_game_runs(
    staged: Stage,
) -> None:
    game = _mid_round(staged, remove=10)
    for seat in (0, 1, None):
        v = view(game, seat)
        assert v.box == (C("S-1"),)
        assert v.removed == 10
        assert v.revealed_removed is None
        assert cards_in(sent(game, seat)).isdisjoint(game.removed)


def test_r25_at_the_end_everything_is_revealed(staged: Stage) -> None:
    game = _over(staged)
    for seat in (0, 1, None):
        v = view(game, seat)
        assert v.over
        assert v.result == game.result()
        assert v.revealed_draw == tuple(tuple(p) for p in game.draw)
        assert v.revealed_won == tuple(tuple(p) for p in game.won)
        assert v.revealed_removed == game.removed
        assert len(game.removed) == 5
        out = sent(game, seat)
        assert len(cards_in(out)) == 112
        assert out["result"] == game.result().to_json()


def test_r25_the_view_is_a_snapshot_holding_no_reference_to_the_game(staged: Stage) -> None:
    game = _mid_round(staged)
    v = view(game, 1)
    assert isinstance(v, View)
    game.slap(0, C("G1-1"))
    game.close_round()
    game.reveal()
    assert v.centre == (C("Y1-1"), C("Y1-2"), C("G1-1"))
    assert v.round is not None
    assert v.round.laid == (0, 1)
    assert not any(isinstance(getattr(v, f.name), Game) for f in dataclasses.fields(v))


def test_a_view_before_the_first_reveal_is_empty_but_for_counts() -> None:
    game = Game.new(Rules(seats=3), "first", start=2)
    out = sent(game, 2)
    assert cards_in(out) == set()
    assert out["draw_counts"] == [37, 37, 38]
    assert (out["turn"], out["to_move"], out["last_card"], out["round"]) == (0, 2, None, None)
    assert (out["over"], out["result"], out["revealed_draw"]) == (False, None, None)


@pytest.mark.parametrize("seat", [-1, -2, 2, 9, True, "0", 0.0])
def test_a_view_for_a_seat_off_the_table_is_malformed(staged: Stage, seat: Any) -> None:
    game = _mid_round(staged)
    with pytest.raises(MalformedError) as e:
        view(game, seat)
    assert e.value.code == "bad_seat"


def test_r10_the_revealer_learns_the_card_no_sooner_and_no_more_than_anyone_else(
    staged: Stage,
) -> None:
    game = staged(3, ["R1-1", "B4-2"])
    game.reveal()
    before = [sent(game, seat) for seat in (0, 1, 2, None)]
    assert all(C("B4-2") not in cards_in(out) for out in before)  # not even seat 1's own top
    game.reveal()
    after = [sent(game, seat) for seat in (0, 1, 2, None)]
    assert all(out["last_card"] == "B4-2" and out["centre"] == ["R1-1", "B4-2"] for out in after)
    # Apart from whose view it is, every seat's view is the same, the revealer's included.
    assert len({json.dumps({**out, "seat": None}) for out in after}) == 1


@pytest.mark.parametrize("stage", [_mid_round, _over])
def test_a_view_sent_as_json_reads_back_as_the_same_view(staged: Stage, stage: Any) -> None:
    """What a client is sent turns back into the seat's :class:`View` (flyswat.client)."""
    game = stage(staged)
    for seat in (0, 1, None):
        assert View.from_json(sent(game, seat)) == view(game, seat)


@pytest.mark.parametrize("seed", range(6))
def test_r25_the_wire_s_view_is_the_view_at_every_step_of_a_game(seed: int) -> None:
    """What a table sends (``view_json``, made straight from the game) is ``view().to_json()``
    for every seat and a spectator, at every reveal and every hand of whole games: rounds
    open and closed, hands on right and wrong flies, penalties, the end (R14–R25)."""
    rng = random.Random(seed)
    game = Game.new(Rules(seats=2 + seed % 3, remove=seed * 7), f"wire-{seed}")

    def same() -> None:
        for seat in [*range(game.rules.seats), None]:
            assert view_json(game, seat) == view(game, seat).to_json()

    same()
    while not game.over:
        game.reveal()
        same()
        if game.round is None:
            continue
        for _ in range(rng.randrange(6)):
            seat, card = rng.randrange(game.rules.seats), rng.choice(game.centre or [None])
            with contextlib.suppress(IllegalActionError, MalformedError):
                game.slap(seat, card, rng.uniform(150, 900))  # type: ignore[arg-type]
                same()
        if rng.random() < 0.3:
            game.done(rng.randrange(game.rules.seats))
            same()
        game.close_round()
        same()


@pytest.mark.parametrize("seat", [-1, 2, True, "0"])
def test_the_wire_s_view_for_a_seat_off_the_table_is_malformed(staged: Stage, seat: Any) -> None:
    with pytest.raises(MalformedError) as e:
        view_json(_mid_round(staged), seat)
    assert e.value.code == "bad_seat"
