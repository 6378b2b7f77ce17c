"""The cards: R1 (deck), R2 (flies), R3 (identity and text form)."""

from __future__ import annotations

import copy
import pickle
from collections import Counter

import pytest

from flyswat import DECK, Card, Colour, MalformedError


def test_r1_the_deck_has_112_cards_96_flies_and_16_swatters() -> None:
    assert len(DECK) == 112
    assert sum(c.is_fly for c in DECK) == 96
    assert sum(c.is_swatter for c in DECK) == 16
    assert all(c.is_fly != c.is_swatter for c in DECK)


def test_r2_there_are_six_colours_with_letters_r_y_g_b_p_o() -> None:
    assert [c.letter for c in Colour] == ["R", "Y", "G", "B", "P", "O"]
    assert [c.order for c in Colour] == [0, 1, 2, 3, 4, 5]


@pytest.mark.parametrize("colour", list(Colour), ids=lambda c: c.letter)
def test_r2_each_colour_has_two_1s_four_2s_3s_4s_and_two_5s_worth_48(colour: Colour) -> None:
    flies = [c for c in DECK if c.colour is colour]
    assert Counter(c.value for c in flies) == {1: 2, 2: 4, 3: 4, 4: 4, 5: 2}
    assert sum(c.value for c in flies) == 48


def test_r2_the_whole_deck_is_worth_288_points() -> None:
    assert sum(c.value for c in DECK if c.is_fly) == 288


def test_r3_every_card_has_its_own_identity_and_text() -> None:
    assert len({c.text for c in DECK}) == 112
    assert len(set(DECK)) == 112
    assert Card.parse("R3-1") != Card.parse("R3-2")


@pytest.mark.parametrize(
    ("text", "colour", "value", "copy"),
    [
        ("R3-1", Colour.RED, 3, 1),
        ("R3-4", Colour.RED, 3, 4),
        ("Y5-2", Colour.YELLOW, 5, 2),
        ("G1-1", Colour.GREEN, 1, 1),
        ("B2-4", Colour.BLUE, 2, 4),
        ("P4-3", Colour.PURPLE, 4, 3),
        ("O5-1", Colour.ORANGE, 5, 1),
        ("S-1", None, 0, 1),
        ("S-16", None, 0, 16),
    ],
)
def test_r3_a_card_text_names_colour_value_and_copy(
    text: str, colour: Colour | None, value: int, copy: int
) -> None:
    card = Card.parse(text)
    assert (card.colour, card.value, card.copy) == (colour, value, copy)
    assert card.is_swatter == (colour is None)


@pytest.mark.parametrize("card", DECK, ids=str)
def test_r3_every_card_text_round_trips(card: Card) -> None:
    assert Card.parse(str(card)) is card
    assert eval(repr(card), {"Card": Card}) is card


def test_r3_the_deck_is_in_canonical_order_flies_by_colour_value_copy_then_swatters() -> None:
    assert [c.text for c in DECK[:3]] == ["R1-1", "R1-2", "R2-1"]
    assert DECK[16].text == "Y1-1"
    assert DECK[95].text == "O5-2"
    assert [c.text for c in DECK[96:]] == [f"S-{k}" for k in range(1, 17)]
    assert [c.index for c in DECK] == list(range(112))
    assert sorted(reversed(DECK)) == list(DECK)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "R",
        "R3",
        "R3-",
        "R3-0",
        "R3-5",  # values 2-4 have copies 1-4 only
        "R1-3",  # values 1 and 5 have copies 1-2 only
        "R5-3",
        "R0-1",
        "R6-1",
        "X3-1",
        "r3-1",
        " R3-1",
        "R3-1 ",
        "R3_1",
        "R03-1",
        "R3-01",
        "S-0",
        "S-17",
        "S1-1",
        "S",
        "S-",
        "s-1",
    ],
)
def test_r3_a_malformed_card_text_is_refused(text: str) -> None:
    with pytest.raises(MalformedError) as e:
        Card.parse(text)
    assert e.value.code == "bad_card"


@pytest.mark.parametrize("thing", [None, 3, 3.0, b"R3-1", ["R3-1"], ("R", 3)])
def test_r3_a_card_text_that_is_not_a_string_is_malformed(thing: object) -> None:
    with pytest.raises(MalformedError):
        Card.parse(thing)  # type: ignore[arg-type]


def test_a_malformed_error_is_also_a_value_error() -> None:
    with pytest.raises(ValueError):
        Card.parse("R9-1")


@pytest.mark.parametrize("letter", ["", "X", "r", "RY", "S"])
def test_an_unknown_colour_letter_is_malformed(letter: str) -> None:
    with pytest.raises(MalformedError) as e:
        Colour.parse(letter)
    assert e.value.code == "bad_colour"


@pytest.mark.parametrize("colour", list(Colour), ids=lambda c: c.letter)
def test_a_colour_letter_round_trips(colour: Colour) -> None:
    assert Colour.parse(colour.letter) is colour


def test_a_card_is_immutable() -> None:
    card = Card.parse("R3-1")
    with pytest.raises(AttributeError):
        card.value = 5  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del card.text
    assert card.text == "R3-1"


def test_a_copied_or_pickled_card_is_the_same_card() -> None:
    card = Card.parse("O4-3")
    assert copy.copy(card) is card
    assert copy.deepcopy(card) is card
    assert pickle.loads(pickle.dumps(card)) is card
