"""Play now by rating (flyswat.players.matching): a pure function of a rating, the open
tables' ratings and how long each has waited."""

from __future__ import annotations

import math

import pytest

from flyswat.players.matching import (
    ANY_AFTER_MS,
    BAND_PER_S,
    BAND_START,
    OpenTable,
    band,
    choose,
    gap,
)


def test_the_band_starts_narrow_and_widens_with_each_second_waited() -> None:
    assert band(0) == BAND_START
    assert band(1000) == BAND_START + BAND_PER_S
    assert band(5000) == BAND_START + 5 * BAND_PER_S
    assert band(ANY_AFTER_MS - 1) < math.inf
    assert band(ANY_AFTER_MS) == math.inf


def test_the_gap_is_from_the_mean_of_the_tables_players() -> None:
    assert gap(1000, (900, 1100)) == 0
    assert gap(1200, (1000,)) == 200


@pytest.mark.parametrize(
    ("rating", "waited_ms", "joins"),
    [
        (1050, 0, True),  # within ±100 at once
        (1150, 0, False),  # 150 away: not yet
        (1150, 1000, True),  # a second later the band is ±160
        (2400, ANY_AFTER_MS - 1, False),
        (2400, ANY_AFTER_MS, True),  # after the last widening: any table
    ],
)
def test_a_table_takes_a_newcomer_within_its_band(rating: int, waited_ms: float,
                                                  joins: bool) -> None:  # fmt: skip
    table = OpenTable("AAAAAA", (1000,), opened=10_000)
    assert (choose(rating, [table], 10_000 + waited_ms) is table) is joins


def test_of_the_tables_that_take_them_the_closest_is_chosen() -> None:
    far = OpenTable("FARFAR", (1300,), opened=0)  # waited long: takes anyone
    near = OpenTable("NEARBY", (1040, 1000), opened=9_000)
    assert choose(1000, [far, near], 10_000) is near
    assert choose(1000, [far], 10_000) is far


def test_on_a_tie_the_table_waiting_longest_is_chosen() -> None:
    new = OpenTable("NEWONE", (1000,), opened=5_000)
    old = OpenTable("OLDONE", (1000,), opened=1_000)
    assert choose(1000, [new, old], 6_000) is old


def test_no_table_in_band_means_opening_one() -> None:
    assert choose(1000, [], 0) is None
    assert choose(1000, [OpenTable("HIGHER", (1500,), opened=0)], 1000) is None
