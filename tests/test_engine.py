"""The rules engine, rule by rule (R5–R24 of ``docs/RULES.md``).

Positions are staged exactly: ``staged(seats, reveals)`` builds a game whose reveals begin
with the given cards in turn order, so each test sets up precisely the centre it needs.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest

from flyswat import (
    DECK,
    Card,
    Colour,
    FlyswatError,
    Game,
    IllegalActionError,
    MalformedError,
    Result,
    Round,
    Rules,
    Turn,
)
from flyswat.engine import deal
from flyswat.shuffle import commitment, shuffled

Stage = Callable[..., Game]

C = Card.parse


def flies(letter: str, n: int, skip: int = 0) -> list[str]:
    """``n`` distinct flies of one colour, cheapest first (after ``skip`` of them)."""
    colour = Colour.parse(letter)
    return [c.text for c in DECK if c.colour is colour][skip : skip + n]


def reveal(game: Game, n: int) -> list[Turn]:
    """Reveal ``n`` cards, none of which may open a round."""
    turns = [game.reveal() for _ in range(n)]
    if any(t.round is not None for t in turns):
        raise RuntimeError("a staged centre card opened a round")
    return turns


def centre_then(staged: Stage, seats: int, centre: list[str], trigger: str) -> tuple[Game, Turn]:
    """A game whose centre holds ``centre`` when ``trigger`` is revealed."""
    game = staged(seats, [*centre, trigger])
    reveal(game, len(centre))
    return game, game.reveal()


def cards(texts: list[str]) -> list[Card]:
    return [C(t) for t in texts]


# -- R5–R7: shuffle, remove, deal ------------------------------------------------------------


def test_r5_the_same_seed_deals_the_same_game() -> None:
    a, b = Game.new(Rules(seats=3), "seed"), Game.new(Rules(seats=3), "seed")
    assert a.dealt == b.dealt


def test_r5_another_seed_deals_another_game() -> None:
    assert Game.new(Rules(), "one").dealt != Game.new(Rules(), "two").dealt
    assert Game.new(Rules(), 1).dealt != Game.new(Rules(), 2).dealt


def test_r5_an_integer_seed_and_its_decimal_text_shuffle_alike() -> None:
    assert shuffled(42) == shuffled("42")


@pytest.mark.parametrize(
    ("seed", "top", "bottom"),
    [
        (0, "B1-1 P1-2 B4-4 R2-3 O3-3 O4-2 B2-3 Y1-2", "G4-4 S-10 Y4-1"),
        ("flyswat", "P4-2 Y4-4 O2-2 O2-1 B5-2 O5-2 P1-2 O3-1", "S-11 S-13 O3-4"),
    ],
)
def test_r5_the_published_shuffle_gives_these_decks(seed: int | str, top: str, bottom: str) -> None:
    # Golden values: any implementation of the documented shuffle must deal exactly these.
    deck = [c.text for c in shuffled(seed)]
    assert deck[:8] == top.split()
    assert deck[-3:] == bottom.split()


def test_r5_the_seed_commitment_is_the_sha256_of_its_text() -> None:
    assert commitment("flyswat") == (
        "60b194b2b6e97efdf6f7127eff844696ae7dd1367d56efae88814f234838abbd"
    )
    assert commitment(7) == commitment("7")


@pytest.mark.parametrize(
    "seed",
    [1.5, None, True, b"x", ["x"], "\ud800", 10**5000],
    ids=["float", "None", "True", "bytes", "list", "lone surrogate", "5001 digits"],
)
def test_r5_a_seed_without_a_canonical_text_is_malformed(seed: object) -> None:
    with pytest.raises(MalformedError) as e:
        Game.new(Rules(), seed)  # type: ignore[arg-type]
    assert e.value.code == "bad_seed"


@pytest.mark.parametrize("remove", [0, 1, 30, 100])
def test_r6_removed_cards_come_from_the_top_of_the_shuffled_deck_and_never_play(
    remove: int,
) -> None:
    game = Game.new(Rules(seats=2, remove=remove), "short")
    deck = shuffled("short")
    assert list(game.removed) == deck[:remove]
    assert game.box == deck[:remove]
    assert sum(len(p) for p in game.draw) == 112 - remove
    in_play = {c for p in game.draw for c in p}
    assert in_play.isdisjoint(game.removed)


@pytest.mark.parametrize(("seats", "start"), [(2, 0), (3, 0), (3, 2), (5, 1), (8, 7)])
def test_r7_cards_are_dealt_one_at_a_time_clockwise_from_the_start_player(
    seats: int, start: int
) -> None:
    _removed, piles = deal(Rules(seats=seats, remove=3), "deal", start)
    rest = shuffled("deal")[3:]
    for k, card in enumerate(rest):
        seat = (start + k) % seats
        assert piles[seat][k // seats] is card
    sizes = [len(p) for p in piles]
    assert max(sizes) - min(sizes) <= 1
    assert sizes[start] == max(sizes)


def test_r7_some_seats_may_get_one_card_more() -> None:
    game = Game.new(Rules(seats=3), "x", start=1)
    assert [len(p) for p in game.draw] == [37, 38, 37]


def test_r7_every_seat_starts_with_a_draw_pile_and_nothing_else() -> None:
    game = Game.new(Rules(seats=8, remove=104), "tiny")
    assert [len(p) for p in game.draw] == [1] * 8
    assert game.won == [[]] * 8
    assert game.centre == []
    assert game.round is None
    assert not game.over


# -- R9–R12: turns ---------------------------------------------------------------------------


@pytest.mark.parametrize(("seats", "start"), [(2, 1), (4, 0), (4, 3), (7, 5), (8, 0)])
def test_r9_r10_the_start_player_reveals_first_then_turns_go_clockwise(
    staged: Stage, seats: int, start: int
) -> None:
    reveals = flies("O", seats + 1)
    game = staged(seats, reveals, start=start)
    assert game.to_move == start
    turns = reveal(game, seats + 1)
    assert [t.seat for t in turns] == [(start + k) % seats for k in range(seats + 1)]
    assert [t.card.text for t in turns] == reveals
    assert game.to_move == (start + 1) % seats


def test_r9_r10_turns_wrap_around_the_table_in_seat_order(staged: Stage) -> None:
    reveals = flies("R", 7)
    game = staged(3, reveals, start=2)
    turns = reveal(game, 7)
    assert [t.seat for t in turns] == [2, 0, 1, 2, 0, 1, 2]
    assert [t.card.text for t in turns] == reveals


def test_r10_a_reveal_takes_the_top_card_of_the_movers_draw_pile(staged: Stage) -> None:
    game = staged(2, ["G4-2", "O1-1"])
    before = [len(p) for p in game.draw]
    turn = game.reveal()
    assert (turn.seat, turn.card, turn.round) == (0, C("G4-2"), None)
    assert [len(p) for p in game.draw] == [before[0] - 1, before[1]]
    assert game.to_move == 1
    assert game.turns == [turn]


def test_r11_a_fly_goes_face_up_into_the_centre_beside_the_others(staged: Stage) -> None:
    game = staged(2, ["R1-1", "Y2-3", "R5-2"])
    reveal(game, 3)
    assert game.centre == cards(["R1-1", "Y2-3", "R5-2"])
    assert game.where()[C("Y2-3")] == "centre"


def test_r12_a_swatter_opens_a_slap_round_then_goes_to_the_box(staged: Stage) -> None:
    game, turn = centre_then(staged, 2, ["R1-1"], "S-7")
    assert turn.round is game.round
    assert isinstance(turn.round, Round)
    assert turn.round.trigger is C("S-7")
    assert turn.round.seat == 1
    assert game.where()[C("S-7")] == "trigger"
    assert C("S-7") not in game.centre
    game.close_round()
    assert game.round is None
    assert game.where()[C("S-7")] == "box"
    assert game.box == [C("S-7")]


# -- R13, R13a: five colours -----------------------------------------------------------------


def test_r13_a_fifth_colour_opens_a_round_and_goes_to_the_box(staged: Stage) -> None:
    centre = ["R1-1", "Y1-1", "G1-1", "P1-1"]
    game = staged(3, [*centre, "B3-2"])
    reveal(game, 4)
    assert game.triggers_round(C("B3-2"))
    turn = game.reveal()
    assert turn.round is not None
    assert turn.round.trigger is C("B3-2")
    assert game.centre == cards(centre)
    assert game.where()[C("B3-2")] == "trigger"
    game.close_round()
    assert game.where()[C("B3-2")] == "box"
    assert game.centre == cards(centre)


@pytest.mark.parametrize(
    ("centre", "fly"),
    [
        pytest.param([], "R1-1", id="empty centre"),
        pytest.param(["R1-1"], "Y1-1", id="one colour, a second"),
        pytest.param(["R1-1", "Y1-1", "G1-1"], "B1-1", id="three colours, a fourth"),
        pytest.param(["R1-1", "Y1-1", "G1-1", "P1-1"], "R2-1", id="four colours, one of them"),
        pytest.param(["R1-1", "Y1-1", "G1-1", "P1-1"], "P5-2", id="four colours, the last"),
        pytest.param([*flies("O", 6)], "O5-2", id="many of one colour"),
    ],
)
def test_r13a_a_fly_of_a_colour_already_there_or_with_fewer_than_four_colours_is_placed(
    staged: Stage, centre: list[str], fly: str
) -> None:
    game = staged(2, [*centre, fly])
    reveal(game, len(centre))
    assert not game.triggers_round(C(fly))
    turn = game.reveal()
    assert turn.round is None
    assert game.round is None
    assert game.centre == cards([*centre, fly])


def test_r13_the_centre_never_holds_more_than_four_colours(staged: Stage) -> None:
    order = ["R1-1", "Y1-1", "G1-1", "P1-1", "B1-1", "O1-1", "R1-2"]
    game = staged(2, order)
    reveal(game, 4)
    for _ in range(2):
        assert game.reveal().round is not None
        game.close_round()
    game.reveal()
    assert {c.colour for c in game.centre} == {
        Colour.RED,
        Colour.YELLOW,
        Colour.GREEN,
        Colour.PURPLE,
    }
    assert game.box == cards(["B1-1", "O1-1"])


# -- R14, R15: allowed colours, empty centre -------------------------------------------------


@pytest.mark.parametrize(
    ("centre", "trigger", "allowed"),
    [
        pytest.param(["R1-1"], "S-1", "R", id="one fly"),
        pytest.param(["R1-1", "R1-2", "Y1-1"], "S-1", "R", id="most numerous"),
        pytest.param(["Y5-1", "R1-1", "R1-2"], "S-1", "R", id="number not value"),
        pytest.param(["R1-1", "G1-1"], "S-1", "RG", id="two tie"),
        pytest.param(["R1-1", "Y1-1", "G1-1", "B1-1"], "S-1", "RYGB", id="four tie"),
        pytest.param(
            [*flies("R", 3), *flies("G", 3), *flies("B", 2), "P1-1"], "S-1", "RG", id="example 2"
        ),
        pytest.param(
            [*flies("R", 2), "Y1-1", "G1-1", "P1-1"], "B1-1", "R", id="fifth colour: not counted"
        ),
        pytest.param(
            ["R1-1", "Y1-1", "G1-1", "P1-1"], "B1-1", "RYGP", id="fifth colour: never allowed"
        ),
        pytest.param([*flies("O", 3), *flies("P", 2)], "S-16", "O", id="orange"),
    ],
)
def test_r14_only_the_most_numerous_colours_are_allowed_ties_included(
    staged: Stage, centre: list[str], trigger: str, allowed: str
) -> None:
    _game, turn = centre_then(staged, 2, centre, trigger)
    assert turn.round is not None
    assert turn.round.allowed == {Colour.parse(x) for x in allowed}


def test_r14_the_allowed_colours_are_fixed_when_the_round_opens(staged: Stage) -> None:
    game, turn = centre_then(staged, 2, ["R1-1", "R1-2", "Y1-1", "Y1-2", "Y2-1"], "S-1")
    assert turn.round is not None
    assert turn.round.allowed == {Colour.YELLOW}
    # Yellow won twice, so yellow is no longer most numerous in the centre — still allowed.
    game.slap(0, C("Y1-1"))
    game.slap(1, C("Y1-2"))
    game.slap(0, C("Y2-1"))
    r = game.close_round()
    assert r.won == [(0, C("Y1-1")), (1, C("Y1-2")), (0, C("Y2-1"))]


def test_r15_with_an_empty_centre_the_round_closes_at_once_and_play_goes_on(
    staged: Stage,
) -> None:
    game = staged(2, ["S-3", "R1-1"])
    turn = game.reveal()
    assert turn.round is not None
    assert turn.round.closed
    assert turn.round.allowed == frozenset()
    assert turn.round.slaps == turn.round.won == turn.round.penalties == []
    assert game.round is None
    assert game.box == [C("S-3")]
    assert not game.over
    assert game.to_move == 1
    with pytest.raises(IllegalActionError) as e:
        game.slap(1, C("R1-1"))
    assert e.value.code == "no_round"
    game.reveal()
    assert game.centre == [C("R1-1")]


# -- R16: hands ------------------------------------------------------------------------------


def _open_round(staged: Stage, seats: int) -> Game:
    game, _ = centre_then(staged, seats, ["R1-1", "R1-2", "R2-1", "Y1-1"], "S-1")
    return game


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_r16_up_to_four_seats_each_player_has_two_hands(staged: Stage, seats: int) -> None:
    game = _open_round(staged, seats)
    game.slap(0, C("R1-1"))
    game.slap(0, C("R1-2"))
    with pytest.raises(IllegalActionError) as e:
        game.slap(0, C("R2-1"))
    assert e.value.code == "no_hands_left"
    assert game.round is not None
    assert game.round.hands_of(0) == cards(["R1-1", "R1-2"])


@pytest.mark.parametrize("seats", [5, 6, 7, 8])
def test_r16_at_five_or_more_seats_each_player_has_one_hand(staged: Stage, seats: int) -> None:
    game = _open_round(staged, seats)
    game.slap(3, C("R1-1"))
    with pytest.raises(IllegalActionError) as e:
        game.slap(3, C("R1-2"))
    assert e.value.code == "no_hands_left"
    game.slap(4, C("R1-2"))
    r = game.close_round()
    assert r.won == [(3, C("R1-1")), (4, C("R1-2"))]


def test_r16_a_player_cannot_put_both_hands_on_one_card(staged: Stage) -> None:
    game = _open_round(staged, 2)
    game.slap(1, C("R1-1"))
    with pytest.raises(IllegalActionError) as e:
        game.slap(1, C("R1-1"))
    assert e.value.code == "same_card"
    game.slap(1, C("R2-1"))  # the second hand is still free for another card


def test_r16_any_centre_fly_may_be_slapped_allowed_or_not(staged: Stage) -> None:
    game = _open_round(staged, 2)
    game.slap(0, C("Y1-1"))
    assert game.round is not None
    assert [(s.seat, s.card) for s in game.round.slaps] == [(0, C("Y1-1"))]


@pytest.mark.parametrize("card", ["S-1", "R3-1", "S-2", "G1-1"])
def test_r16_a_hand_can_only_be_laid_on_a_centre_fly(staged: Stage, card: str) -> None:
    game = _open_round(staged, 2)  # S-1 is the trigger: not in the centre either
    with pytest.raises(IllegalActionError) as e:
        game.slap(0, C(card))
    assert e.value.code == "not_in_centre"


# -- R17, R18: stacking, winning -------------------------------------------------------------


def test_r17_r18_the_bottom_hand_wins_and_the_hands_on_top_get_and_pay_nothing(
    staged: Stage,
) -> None:
    game = _open_round(staged, 4)
    for seat in (2, 0, 3, 1):
        game.slap(seat, C("R2-1"))
    assert game.round is not None
    assert [s.seat for s in game.round.slaps] == [2, 0, 3, 1]
    r = game.close_round()
    assert r.won == [(2, C("R2-1"))]
    assert r.penalties == []
    assert game.won == [[], [], [C("R2-1")], []]
    assert C("R2-1") not in game.centre


def test_r18_two_players_on_two_different_flies_of_one_value_both_win(staged: Stage) -> None:
    game = _open_round(staged, 3)
    game.slap(1, C("R1-1"))
    game.slap(2, C("R1-2"))
    r = game.close_round()
    assert r.won == [(1, C("R1-1")), (2, C("R1-2"))]
    assert game.centre == cards(["R2-1", "Y1-1"])


def test_r18_a_won_fly_goes_on_top_of_the_won_pile(staged: Stage) -> None:
    reveals = ["R1-1", "S-1", "Y3-1", "S-2"]
    game = staged(2, reveals)
    game.reveal()
    game.reveal()
    game.slap(0, C("R1-1"))
    game.close_round()
    game.reveal()
    game.reveal()
    game.slap(0, C("Y3-1"))
    game.close_round()
    assert game.won[0] == cards(["R1-1", "Y3-1"])  # the end of the list is the top
    assert game.where()[C("Y3-1")] == "won:0"


def test_r18_an_unslapped_fly_stays_in_the_centre(staged: Stage) -> None:
    game = _open_round(staged, 2)
    game.slap(0, C("R1-1"))
    game.close_round()
    assert game.centre == cards(["R1-2", "R2-1", "Y1-1"])


# -- R19, R20: wrong slaps and the order of resolution ---------------------------------------

# Three seats. Round 1 (S-1): seat 0 wins R1-1, seat 1 wins R1-2, seat 2 wins nothing.
# Then the centre is Y1-1 Y1-2 G1-1 and seat 0 reveals S-2: only yellow is allowed.
PENALTY_SETUP = ["R1-1", "R1-2", "S-1", "Y1-1", "Y1-2", "G1-1", "S-2"]


def _second_round(staged: Stage) -> Game:
    game = staged(3, PENALTY_SETUP)
    reveal(game, 2)
    game.reveal()
    game.slap(0, C("R1-1"))
    game.slap(1, C("R1-2"))
    game.close_round()
    reveal(game, 3)
    turn = game.reveal()
    assert turn.round is not None
    assert turn.round.allowed == {Colour.YELLOW}
    assert game.won == [[C("R1-1")], [C("R1-2")], []]
    return game


def test_r19_every_hand_on_a_wrong_fly_pays(staged: Stage) -> None:
    game = _second_round(staged)
    for seat in (1, 0, 2):
        game.slap(seat, C("G1-1"))
    r = game.close_round()
    assert r.won == []
    assert r.penalties == [(1, C("R1-2")), (0, C("R1-1"))]
    assert game.won == [[], [], []]
    assert C("G1-1") in game.centre


def test_r19_a_wrong_fly_stays_in_the_centre(staged: Stage) -> None:
    game = _second_round(staged)
    game.slap(2, C("G1-1"))
    game.close_round()
    assert game.centre == cards(["Y1-1", "Y1-2", "G1-1"])


def test_r19_a_player_with_an_empty_won_pile_pays_nothing(staged: Stage) -> None:
    game = _second_round(staged)
    before = list(game.draw[2])
    game.slap(2, C("G1-1"))
    r = game.close_round()
    assert r.penalties == []
    assert list(game.draw[2]) == before
    assert game.won[2] == []


def test_r19_the_penalty_is_the_last_won_fly_put_at_the_bottom_of_the_draw_pile(
    staged: Stage,
) -> None:
    game = _second_round(staged)
    top_before = game.draw[0][0]
    size_before = len(game.draw[0])
    game.slap(0, C("G1-1"))
    game.close_round()
    assert game.draw[0][-1] is C("R1-1")
    assert game.draw[0][0] is top_before
    assert len(game.draw[0]) == size_before + 1
    assert game.where()[C("R1-1")] == "draw:0"


def test_r19_the_penalty_is_per_wrong_hand(staged: Stage) -> None:
    # Seat 0 wins R1-1 then R1-2 (top), and then lays both hands on wrong flies: pays both.
    reveals = ["R1-1", "S-1", "R1-2", "S-2", "Y1-1", "Y1-2", "G1-1", "B1-1", "S-3"]
    game = staged(2, reveals)
    for fly, swatter in (("R1-1", "S-1"), ("R1-2", "S-2")):
        reveal(game, 1)
        game.reveal()
        game.slap(0, C(fly))
        game.close_round()
        assert swatter in [c.text for c in game.box]
    reveal(game, 4)
    game.reveal()
    game.slap(0, C("G1-1"))
    game.slap(0, C("B1-1"))
    r = game.close_round()
    assert r.penalties == [(0, C("R1-2")), (0, C("R1-1"))]
    assert list(game.draw[0])[-2:] == cards(["R1-2", "R1-1"])
    assert game.won[0] == []


def test_r19_a_wrong_hand_pays_even_when_another_hand_took_an_allowed_fly(staged: Stage) -> None:
    game = _second_round(staged)
    game.slap(1, C("Y1-1"))
    game.slap(1, C("G1-1"))
    game.slap(2, C("Y1-2"))
    r = game.close_round()
    assert r.won == [(1, C("Y1-1")), (2, C("Y1-2"))]
    assert r.penalties == [(1, C("Y1-1"))]
    assert game.won == [[C("R1-1")], [C("R1-2")], [C("Y1-2")]]


@pytest.mark.parametrize(
    "order",
    [
        pytest.param([C("Y1-1"), C("G1-1")], id="won first"),
        pytest.param([C("G1-1"), C("Y1-1")], id="wrong first"),
    ],
)
def test_r20_a_winner_who_also_slapped_wrong_gives_back_the_fly_just_won(
    staged: Stage, order: list[Card]
) -> None:
    game = _second_round(staged)
    for card in order:
        game.slap(0, card)
    r = game.close_round()
    assert r.won == [(0, C("Y1-1"))]
    assert r.penalties == [(0, C("Y1-1"))]
    assert game.won[0] == [C("R1-1")]
    assert game.draw[0][-1] is C("Y1-1")


def test_r20_wins_are_applied_in_the_order_the_winning_hands_arrived(staged: Stage) -> None:
    game = _second_round(staged)
    game.slap(2, C("Y1-2"))
    game.slap(1, C("Y1-2"))
    game.slap(1, C("Y1-1"))
    game.slap(0, C("Y1-1"))
    r = game.close_round()
    assert r.won == [(2, C("Y1-2")), (1, C("Y1-1"))]


def test_r20_penalties_are_applied_in_the_order_the_wrong_hands_arrived(staged: Stage) -> None:
    game = _second_round(staged)
    game.slap(1, C("G1-1"))
    game.slap(2, C("Y1-1"))
    game.slap(0, C("G1-1"))
    r = game.close_round()
    assert r.penalties == [(1, C("R1-2")), (0, C("R1-1"))]


def test_r20_a_player_who_wins_and_has_a_wrong_hand_with_nothing_before_pays_the_new_fly(
    staged: Stage,
) -> None:
    game = _second_round(staged)
    game.slap(2, C("G1-1"))
    game.slap(2, C("Y1-1"))
    r = game.close_round()
    assert r.won == [(2, C("Y1-1"))]
    assert r.penalties == [(2, C("Y1-1"))]
    assert game.won[2] == []


# -- R21: the end of a round -----------------------------------------------------------------


def test_r21_a_round_is_complete_when_every_seat_has_laid_all_hands_or_is_done(
    staged: Stage,
) -> None:
    game = _open_round(staged, 3)
    assert not game.round_complete()
    game.slap(0, C("R1-1"))
    game.slap(0, C("R1-2"))
    game.done(1)
    assert not game.round_complete()
    game.slap(2, C("R2-1"))
    assert not game.round_complete()
    game.done(2)
    assert game.round_complete()
    game.close_round()
    assert not game.round_complete()


def test_r21_a_seat_with_a_hand_on_every_centre_fly_has_no_hand_left_to_lay(
    staged: Stage,
) -> None:
    game, _ = centre_then(staged, 2, ["R1-1"], "S-1")
    game.slap(0, C("R1-1"))
    assert not game.round_complete()
    game.slap(1, C("R1-1"))
    assert game.round_complete()


def test_r21_the_seats_still_to_complete_a_round_are_the_ones_not_complete(
    staged: Stage,
) -> None:
    game = _open_round(staged, 3)
    assert game.incomplete(range(3)) == [0, 1, 2]
    game.slap(0, C("R1-1"))
    assert game.incomplete(range(3)) == [0, 1, 2]  # one hand of two
    game.slap(0, C("R1-2"))
    game.done(2)
    assert game.incomplete(range(3)) == [1]
    assert game.incomplete([2, 0]) == []
    assert [s for s in range(3) if not game.seat_complete(s)] == [1]
    assert game.round is not None and game.round.laid_by == {0: 2}
    game.slap(1, C("R2-1"))
    assert game.round.laid_by == {0: 2, 1: 1}
    game.close_round()
    assert game.incomplete(range(3)) == []
    assert not game.seat_complete(1)


def test_r21_a_seat_that_said_it_is_done_may_lay_no_more_hands(staged: Stage) -> None:
    game = _open_round(staged, 2)
    game.slap(0, C("R1-1"))
    game.done(0)
    game.done(0)  # saying it twice is harmless
    with pytest.raises(IllegalActionError) as e:
        game.slap(0, C("R1-2"))
    assert e.value.code == "done"


def test_r21_the_round_may_be_closed_before_everyone_has_finished(staged: Stage) -> None:
    game = _open_round(staged, 4)
    game.slap(3, C("R1-1"))
    r = game.close_round()
    assert r.closed
    assert r.won == [(3, C("R1-1"))]


def test_r21_a_slap_after_the_round_closed_is_refused_and_changes_nothing(
    staged: Stage, state: Callable[[Game], object]
) -> None:
    game = _open_round(staged, 2)
    game.slap(0, C("R1-1"))
    r = game.close_round()
    before = state(game)
    with pytest.raises(IllegalActionError) as e:
        game.slap(1, C("R1-2"))
    assert e.value.code == "no_round"
    assert "no slap round" in e.value.message
    assert state(game) == before
    assert r.slaps[-1].card is C("R1-1")


def test_r21_a_slap_with_no_round_open_is_refused_and_changes_nothing(
    staged: Stage, state: Callable[[Game], object]
) -> None:
    game = staged(2, ["R1-1", "R1-2"])
    reveal(game, 2)
    before = state(game)
    with pytest.raises(IllegalActionError) as e:
        game.slap(0, C("R1-1"))
    assert e.value.code == "no_round"
    assert state(game) == before


def test_r21_a_slap_records_its_reaction_time(staged: Stage) -> None:
    game = _open_round(staged, 2)
    s = game.slap(1, C("R1-1"), ms=312)
    assert (s.seat, s.card, s.ms) == (1, C("R1-1"), 312)
    assert game.slap(0, C("R1-1")).ms is None


# -- R22: the end of the game ----------------------------------------------------------------


def test_r22_the_game_ends_after_a_player_reveals_their_last_card(staged: Stage) -> None:
    game = staged(3, ["R1-1", "Y1-1", "G1-1"], start=1, sizes={0: 1})
    reveal(game, 2)
    assert not game.over
    game.reveal()  # seat 0's only card
    assert game.over
    assert game.centre == cards(["R1-1", "Y1-1", "G1-1"])
    assert game.draw[0] == type(game.draw[0])()


def test_r22_a_last_card_that_is_a_swatter_is_played_out_before_the_game_ends(
    staged: Stage,
) -> None:
    game = staged(2, ["R1-1", "R2-1", "S-1"], sizes={0: 2})
    reveal(game, 2)
    turn = game.reveal()
    assert turn.round is not None
    assert not game.over
    game.slap(1, C("R1-1"))
    game.slap(0, C("R2-1"))
    game.close_round()
    assert game.over
    assert game.won == [[C("R2-1")], [C("R1-1")]]
    assert game.result() == Result((2, 1), (1, 1), (1, 2))


def test_r22_a_last_card_of_a_fifth_colour_is_played_out_too(staged: Stage) -> None:
    game = staged(2, ["R1-1", "Y1-1", "G1-1", "P1-1", "B1-1"], sizes={0: 3})
    reveal(game, 4)
    turn = game.reveal()
    assert turn.round is not None
    assert not game.over
    game.slap(1, C("P1-1"))
    game.close_round()
    assert game.over
    assert game.box == [C("B1-1")]


def test_r22_a_last_swatter_on_an_empty_centre_ends_the_game_at_once(staged: Stage) -> None:
    game = staged(2, ["S-1"], sizes={0: 1})
    game.reveal()
    assert game.over
    assert game.round is None
    assert game.result() == Result((0, 0), (0, 0), (1, 1))


def test_r22_a_penalty_landing_after_the_last_card_changes_nothing(
    staged: Stage, state: Callable[[Game], object]
) -> None:
    # Seat 0 has four cards; its last one, S-2, opens a round in which it slaps wrong.
    reveals = ["R1-1", "S-1", "Y1-1", "G1-1", "G1-2", "B1-1", "S-2"]
    game = staged(2, reveals, sizes={0: 4})
    game.reveal()
    game.reveal()
    game.slap(0, C("R1-1"))
    game.close_round()
    reveal(game, 4)
    turn = game.reveal()
    assert turn.seat == 0
    assert turn.round is not None
    assert turn.round.allowed == {Colour.GREEN}
    game.slap(0, C("Y1-1"))
    game.slap(1, C("G1-1"))
    r = game.close_round()
    assert r.penalties == [(0, C("R1-1"))]
    assert list(game.draw[0]) == [C("R1-1")]  # the penalty landed in the empty pile…
    assert game.over  # …and the game is over all the same
    assert game.result() == Result((0, 1), (0, 1), (2, 1))
    before = state(game)
    with pytest.raises(IllegalActionError) as e:
        game.reveal()
    assert e.value.code == "game_over"
    assert state(game) == before


def test_r22_a_penalty_refilling_another_pile_does_not_matter_either(staged: Stage) -> None:
    # Seat 1 is the one whose pile runs out; seat 0 pays a penalty in the last round.
    reveals = ["R1-1", "S-1", "Y1-1", "G1-1", "G1-2", "S-2"]
    game = staged(2, reveals, sizes={1: 3})
    game.reveal()
    game.reveal()
    game.slap(0, C("R1-1"))
    game.close_round()
    reveal(game, 3)
    game.reveal()
    game.slap(0, C("Y1-1"))
    game.close_round()
    assert game.over
    assert game.draw[0][-1] is C("R1-1")


# -- R23, R24: score and ranking -------------------------------------------------------------


def test_r23_a_players_score_is_the_sum_of_the_values_of_their_won_flies(staged: Stage) -> None:
    game, _ = centre_then(staged, 2, ["R5-1", "R4-1", "R1-1", "Y3-1"], "S-1")
    game.slap(0, C("R5-1"))
    game.slap(0, C("R1-1"))
    game.slap(1, C("R4-1"))
    game.close_round()
    assert game.points() == [6, 4]


def test_r23_the_result_is_only_known_when_the_game_is_over(
    staged: Stage, state: Callable[[Game], object]
) -> None:
    game = staged(2, ["R1-1"])
    before = state(game)
    with pytest.raises(IllegalActionError) as e:
        game.result()
    assert e.value.code == "not_over"
    assert state(game) == before


@pytest.mark.parametrize(
    ("points", "flies", "places"),
    [
        pytest.param([10, 20], [3, 5], [2, 1], id="most points wins"),
        pytest.param([30, 30, 5], [9, 11, 2], [2, 1, 3], id="flies break a tie"),
        pytest.param([12, 30, 30, 7], [5, 11, 11, 3], [3, 1, 1, 4], id="shared first"),
        pytest.param([40, 30, 30, 7], [5, 11, 11, 3], [1, 2, 2, 4], id="1 2 2 4"),
        pytest.param([9, 9, 9], [3, 3, 3], [1, 1, 1], id="all tied"),
        pytest.param([0, 0], [0, 0], [1, 1], id="nobody scored"),
        pytest.param([5, 5, 5, 1], [2, 3, 2, 1], [2, 1, 2, 4], id="tie after flies"),
        pytest.param([1, 2, 3, 4, 5], [1, 1, 1, 1, 1], [5, 4, 3, 2, 1], id="in reverse"),
    ],
)
def test_r24_most_points_win_then_most_flies_and_tied_players_share_a_place(
    points: list[int], flies: list[int], places: list[int]
) -> None:
    result = Result.rank(points, flies)
    assert result.places == tuple(places)
    assert result.to_json() == {"points": points, "flies": flies, "places": places}


def test_r24_a_game_tied_on_points_goes_to_the_player_with_more_flies(staged: Stage) -> None:
    game, _ = centre_then(staged, 3, ["R5-1", "R2-1", "R3-1", "R1-1", "Y1-1"], "S-1")
    game.slap(0, C("R5-1"))  # 5 points, one fly
    game.slap(1, C("R2-1"))  # 5 points, two flies
    game.slap(1, C("R3-1"))
    game.slap(2, C("R1-1"))  # 1 point
    game.close_round()
    assert game.points() == [5, 5, 1]
    game = _finish(game)
    assert game.result() == Result((5, 5, 1), (1, 2, 1), (2, 1, 3))


def test_r24_players_tied_on_points_and_flies_share_the_place(staged: Stage) -> None:
    game, _ = centre_then(staged, 3, ["R4-1", "R4-2", "R1-1", "Y1-1"], "S-1")
    game.slap(2, C("R4-1"))
    game.slap(0, C("R4-2"))
    game.close_round()
    game = _finish(game)
    assert game.result().places == (1, 3, 1)


def _finish(game: Game) -> Game:
    """Play the game out with nobody slapping."""
    while not game.over:
        game.reveal()
        if game.round is not None:
            game.close_round()
    return game


# -- The rulebook's examples -----------------------------------------------------------------


def test_example_1_a_blue_fly_on_five_red_two_yellow_one_green_one_purple(staged: Stage) -> None:
    centre = [*flies("R", 5), *flies("Y", 2), "G1-1", "P1-1"]
    game, turn = centre_then(staged, 4, centre, "B2-1")
    assert turn.round is not None  # R13: the blue fly opens a slap round
    assert turn.round.allowed == {Colour.RED}  # R14: red only
    game.close_round()
    assert game.where()[C("B2-1")] == "box"  # and then the blue fly leaves the game
    assert C("B2-1") not in game.centre


def test_example_2_a_swatter_on_three_red_three_green_two_blue_one_purple(staged: Stage) -> None:
    centre = [*flies("R", 3), *flies("G", 3), *flies("B", 2), "P1-1"]
    _game, turn = centre_then(staged, 4, centre, "S-9")
    assert turn.round is not None
    assert turn.round.allowed == {Colour.RED, Colour.GREEN}


# -- Every refused action raises and changes nothing -----------------------------------------


def _fresh(staged: Stage) -> Game:
    return staged(4, ["R1-1"])


def _in_round(staged: Stage) -> Game:
    game = _open_round(staged, 4)
    game.slap(0, C("R1-1"))
    game.slap(0, C("R1-2"))
    game.slap(1, C("R1-1"))
    game.done(2)
    return game


def _in_round_5(staged: Stage) -> Game:
    game = _open_round(staged, 5)
    game.slap(4, C("Y1-1"))
    return game


def _over(staged: Stage) -> Game:
    game = staged(2, ["R1-1"], sizes={0: 1})
    game.reveal()
    return game


REFUSED: list[tuple[str, Callable[[Stage], Game], Callable[[Game], object], type, str]] = [
    ("reveal during a round", _in_round, lambda g: g.reveal(), IllegalActionError, "round_open"),
    ("reveal after the end", _over, lambda g: g.reveal(), IllegalActionError, "game_over"),
    ("slap with no round", _fresh, lambda g: g.slap(0, C("R1-1")), IllegalActionError, "no_round"),
    ("slap after the end", _over, lambda g: g.slap(0, C("R1-1")), IllegalActionError, "no_round"),
    ("slap off the centre", _in_round, lambda g: g.slap(1, C("O5-1")), IllegalActionError,
     "not_in_centre"),
    ("slap the trigger", _in_round, lambda g: g.slap(1, C("S-1")), IllegalActionError,
     "not_in_centre"),
    ("slap one card twice", _in_round, lambda g: g.slap(1, C("R1-1")), IllegalActionError,
     "same_card"),
    ("a third hand", _in_round, lambda g: g.slap(0, C("R2-1")), IllegalActionError,
     "no_hands_left"),
    ("a second hand at 5", _in_round_5, lambda g: g.slap(4, C("R1-1")), IllegalActionError,
     "no_hands_left"),
    ("slap when done", _in_round, lambda g: g.slap(2, C("R1-1")), IllegalActionError, "done"),
    ("done with no round", _fresh, lambda g: g.done(0), IllegalActionError, "no_round"),
    ("close with no round", _fresh, lambda g: g.close_round(), IllegalActionError, "no_round"),
    ("result too early", _in_round, lambda g: g.result(), IllegalActionError, "not_over"),
    ("slap seat -1", _in_round, lambda g: g.slap(-1, C("R2-1")), MalformedError, "bad_seat"),
    ("slap seat 4 of 4", _in_round, lambda g: g.slap(4, C("R2-1")), MalformedError, "bad_seat"),
    ("slap seat True", _in_round, lambda g: g.slap(True, C("R2-1")), MalformedError, "bad_seat"),
    ("slap seat '1'", _in_round, lambda g: g.slap("1", C("R2-1")), MalformedError, "bad_seat"),
    ("bad seat, no round", _fresh, lambda g: g.slap(9, C("R1-1")), MalformedError, "bad_seat"),
    ("slap a text", _in_round, lambda g: g.slap(1, "R2-1"), MalformedError, "bad_card"),
    ("slap a text, no round", _fresh, lambda g: g.slap(1, "R1-1"), MalformedError, "bad_card"),
    ("slap None", _in_round, lambda g: g.slap(1, None), MalformedError, "bad_card"),
    ("negative time", _in_round, lambda g: g.slap(1, C("R2-1"), -5), MalformedError, "bad_ms"),
    ("time not a number", _in_round, lambda g: g.slap(1, C("R2-1"), "5"), MalformedError,
     "bad_ms"),
    ("time not finite", _in_round, lambda g: g.slap(1, C("R2-1"), math.nan), MalformedError,
     "bad_ms"),
    ("time True", _in_round, lambda g: g.slap(1, C("R2-1"), True), MalformedError, "bad_ms"),
    ("done seat 9", _in_round, lambda g: g.done(9), MalformedError, "bad_seat"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("setup", "action", "error", "code"),
    [pytest.param(*case[1:], id=case[0]) for case in REFUSED],
)
def test_every_refused_action_raises_its_error_and_changes_nothing(
    staged: Stage,
    state: Callable[[Game], object],
    setup: Callable[[Stage], Game],
    action: Callable[[Game], object],
    error: type[FlyswatError],
    code: str,
) -> None:
    game = setup(staged)
    before = state(game)
    with pytest.raises(error) as e:
        action(game)
    assert e.value.code == code
    assert e.value.message
    assert state(game) == before


def test_malformed_and_illegal_are_told_apart() -> None:
    assert issubclass(MalformedError, ValueError)
    assert issubclass(MalformedError, FlyswatError)
    assert issubclass(IllegalActionError, FlyswatError)
    assert not issubclass(IllegalActionError, ValueError)
    assert not issubclass(MalformedError, IllegalActionError)


# -- A game built from a deal ----------------------------------------------------------------


def _good_piles() -> list[list[Card]]:
    return [list(DECK[:56]), list(DECK[56:])]


@pytest.mark.parametrize(
    ("piles", "kwargs", "code"),
    [
        pytest.param([list(DECK)], {}, "bad_deal", id="one pile for two seats"),
        pytest.param([list(DECK[:56]), list(DECK[56:111])], {}, "bad_deal", id="a card missing"),
        pytest.param([list(DECK[:57]), list(DECK[56:])], {}, "bad_deal", id="a card twice"),
        pytest.param([[], list(DECK)], {}, "bad_deal", id="an empty pile"),
        pytest.param(
            [list(DECK[:56]), list(DECK[57:])], {"removed": [DECK[56]]}, "bad_deal", id="removed"
        ),
        pytest.param([[c.text for c in DECK[:56]], list(DECK[56:])], {}, "bad_deal", id="texts"),
        pytest.param([[[1]] * 56, list(DECK[56:])], {}, "bad_deal", id="unhashable"),
        pytest.param(_good_piles(), {"start": 2}, "bad_seat", id="start 2 of 2"),
        pytest.param(_good_piles(), {"start": -1}, "bad_seat", id="start -1"),
    ],
)
def test_a_deal_that_is_not_112_cards_once_each_is_malformed(
    piles: list[list[Card]], kwargs: dict[str, object], code: str
) -> None:
    with pytest.raises(MalformedError) as e:
        Game(Rules(seats=2), piles, **kwargs)  # type: ignore[arg-type]
    assert e.value.code == code


def test_a_game_can_be_built_from_a_known_deal() -> None:
    game = Game(Rules(seats=2, remove=1), [DECK[1:57], DECK[57:]], start=1, removed=[DECK[0]])
    assert game.to_move == 1
    assert game.box == [DECK[0]]
    assert game.dealt == (tuple(DECK[1:57]), tuple(DECK[57:]))
    assert game.seed is None


def test_new_records_the_seed_and_the_start() -> None:
    game = Game.new(Rules(seats=5, remove=7), "abc", start=3)
    assert (game.seed, game.start, game.to_move) == ("abc", 3, 3)
    assert len(game.removed) == 7


@pytest.mark.parametrize("start", [-1, 4, True, "0"])
def test_a_start_seat_off_the_table_is_malformed(start: object) -> None:
    with pytest.raises(MalformedError) as e:
        Game.new(Rules(seats=4), "s", start=start)  # type: ignore[arg-type]
    assert e.value.code == "bad_seat"


def test_where_names_the_place_of_every_card(staged: Stage) -> None:
    game = _second_round(staged)
    places = game.where()
    assert len(places) == 112
    assert places[C("R1-1")] == "won:0"
    assert places[C("S-1")] == "box"
    assert places[C("S-2")] == "trigger"
    assert places[C("G1-1")] == "centre"
    assert set(places.values()) == {
        "won:0",
        "won:1",
        "box",
        "trigger",
        "centre",
        "draw:0",
        "draw:1",
        "draw:2",
    }
