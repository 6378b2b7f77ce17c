"""The rule options: R4 (seats), R6 (remove), R16 (hands), R21 (slap window)."""

from __future__ import annotations

import dataclasses

import pytest

from flyswat import MalformedError, Rules


def test_the_defaults_are_four_seats_no_card_removed_and_a_3000_ms_window() -> None:
    rules = Rules()
    assert (rules.seats, rules.remove, rules.slap_window_ms) == (4, 0, 3000)


@pytest.mark.parametrize("seats", range(2, 9))
def test_r4_two_to_eight_seats_may_play(seats: int) -> None:
    assert Rules(seats=seats).seats == seats


@pytest.mark.parametrize("seats", [-1, 0, 1, 9, 12])
def test_r4_fewer_than_two_or_more_than_eight_seats_is_malformed(seats: int) -> None:
    with pytest.raises(MalformedError) as e:
        Rules(seats=seats)
    assert e.value.code == "bad_rules"


@pytest.mark.parametrize(("seats", "hands"), [(2, 2), (3, 2), (4, 2), (5, 1), (6, 1), (8, 1)])
def test_r16_two_hands_each_but_one_at_five_or_more_seats(seats: int, hands: int) -> None:
    assert Rules(seats=seats).hands == hands


def test_r16_hands_are_derived_not_chosen() -> None:
    with pytest.raises(TypeError):
        Rules(seats=4, hands=1)  # type: ignore[call-arg]


@pytest.mark.parametrize(("seats", "remove"), [(2, 0), (2, 30), (2, 110), (8, 104)])
def test_r6_any_number_of_cards_may_be_removed_while_every_seat_keeps_one(
    seats: int, remove: int
) -> None:
    assert Rules(seats=seats, remove=remove).remove == remove


@pytest.mark.parametrize(("seats", "remove"), [(2, -1), (2, 111), (8, 105), (4, 112)])
def test_r6_removing_too_many_or_a_negative_number_of_cards_is_malformed(
    seats: int, remove: int
) -> None:
    with pytest.raises(MalformedError) as e:
        Rules(seats=seats, remove=remove)
    assert e.value.code == "bad_rules"


@pytest.mark.parametrize("window", [500, 3000, 30_000])
def test_r21_the_slap_window_may_be_500_to_30000_ms(window: int) -> None:
    assert Rules(slap_window_ms=window).slap_window_ms == window


@pytest.mark.parametrize("window", [0, 499, 30_001])
def test_r21_a_slap_window_out_of_range_is_malformed(window: int) -> None:
    with pytest.raises(MalformedError) as e:
        Rules(slap_window_ms=window)
    assert e.value.code == "bad_rules"


@pytest.mark.parametrize(
    "options",
    [
        {"seats": "4"},
        {"seats": 4.0},
        {"seats": True},
        {"remove": None},
        {"remove": False},
        {"slap_window_ms": 3000.0},
    ],
)
def test_an_option_that_is_not_a_whole_number_is_malformed(options: dict[str, object]) -> None:
    with pytest.raises(MalformedError) as e:
        Rules(**options)  # type: ignore[arg-type]
    assert e.value.code == "bad_rules"


def test_rules_are_a_frozen_comparable_value() -> None:
    rules = Rules(seats=5, remove=10)
    assert rules == Rules(seats=5, remove=10)
    assert rules != Rules(seats=5, remove=11)
    with pytest.raises(dataclasses.FrozenInstanceError):
        rules.seats = 6  # type: ignore[misc]


def test_rules_write_the_records_rules_object() -> None:
    assert Rules(seats=6, remove=12, slap_window_ms=2500).to_json() == {
        "seats": 6,
        "hands": 1,
        "remove": 12,
        "slap_window_ms": 2500,
    }
