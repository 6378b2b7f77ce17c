"""The one round driver of the simulator and the environments (``flyswat.sim.driver``)."""

from __future__ import annotations

from flyswat import DECK, Card, Game, Rules
from flyswat.sim.driver import advance, play_round, wrong_hands


def staged(reveals: list[str], seats: int = 3, window: int = 1000) -> Game:
    first = [Card.parse(t) for t in reveals]
    order = first + [c for c in DECK if c not in first]
    return Game(Rules(seats=seats, slap_window_ms=window), [order[k::seats] for k in range(seats)])


def test_advance_reveals_up_to_a_round_with_something_to_slap_r15() -> None:
    game = staged(["S-1", "R3-1", "Y2-1", "S-2"])  # the first swatter finds an empty centre
    r = advance(game)
    assert r is not None and r.trigger == Card.parse("S-2")
    assert len(game.turns) == 4 and game.box[:1] == [Card.parse("S-1")]


def test_r21_a_hand_at_exactly_the_window_is_late_one_just_before_counts() -> None:
    game = staged(["R3-1", "R4-1", "S-1"], window=1000)
    advance(game)
    r3, r4 = Card.parse("R3-1"), Card.parse("R4-1")
    closed, late = play_round(game, [(1000, 0, r3), (999, 1, r4), (1200, 2, r3)])
    assert [(s.seat, s.card) for s in closed.slaps] == [(1, r4)]
    assert late == [1, 0, 1]


def test_hands_stack_by_time_ties_by_seat_r17() -> None:
    game = staged(["R3-1", "Y4-1", "S-1"])
    advance(game)
    r3, y4 = Card.parse("R3-1"), Card.parse("Y4-1")
    closed, _ = play_round(game, [(500, 2, r3), (500, 1, r3), (400, 0, y4)])
    assert [(s.seat, s.ms) for s in closed.slaps] == [(0, 400), (1, 500), (2, 500)]
    assert closed.won == [(0, y4), (1, r3)]  # seat 1 is under seat 2: same ms, lower seat
    assert wrong_hands(closed, 3) == [0, 0, 0]  # red and yellow tie: both allowed (R14)
