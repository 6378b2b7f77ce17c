"""The arena (flyswat.players.arena): phases by the time given, points by place (R22's
places), the streak, the standings' order, pairing the waiting players at tables of two to
four, and an operator's schedule; pure functions of their arguments."""

from __future__ import annotations

import pytest

from flyswat.players.arena import (
    LAST_PAIRING_S,
    MAX_TABLE,
    MIN_TABLE,
    Phase,
    Schedule,
    Standing,
    behind,
    counts,
    pair,
    pairs_now,
    phase,
    rank_of,
    ranked,
    scored,
    scored_table,
    table_sizes,
    winner,
)


def _s(player: str, points: int = 0, **kw: int) -> Standing:
    return Standing(player, player.title(), joined=float(kw.pop("joined", 0)), points=points, **kw)


def test_an_arena_is_upcoming_then_running_then_ended_by_the_time_given() -> None:
    assert phase(100, 200, 99.9) is Phase.UPCOMING
    assert phase(100, 200, 100) is Phase.RUNNING
    assert phase(100, 200, 199.9) is Phase.RUNNING
    assert phase(100, 200, 200) is Phase.ENDED


def test_no_table_is_paired_before_the_start_nor_in_the_last_seconds() -> None:
    assert not pairs_now(100, 200, 99)
    assert pairs_now(100, 200, 100)
    assert pairs_now(100, 200, 200 - LAST_PAIRING_S - 0.1)
    assert not pairs_now(100, 200, 200 - LAST_PAIRING_S)
    assert not pairs_now(100, 200, 250)


def test_a_game_counts_only_when_it_ends_before_the_arena_does() -> None:
    assert counts(200, 199.99)
    assert not counts(200, 200)
    assert not counts(200, 230)


@pytest.mark.parametrize(
    ("places", "points"),
    [
        ((1, 2, 3, 4), [3, 2, 1, 0]),
        ((2, 1), [0, 1]),
        ((1, 1, 3), [1, 1, 0]),  # a shared first place: nobody of the two is behind the other
        ((1, 2, 2, 4), [3, 1, 1, 0]),
    ],
)
def test_r22_a_player_scores_a_point_for_each_player_behind_them(
    places: tuple[int, ...], points: list[int]
) -> None:
    assert [behind(places, seat) for seat in range(len(places))] == points


def test_two_wins_in_a_row_set_a_player_on_fire_and_the_next_points_count_double() -> None:
    ana = _s("ana")
    ana = scored(ana, (1, 2, 3), 0, rated=True)  # +2
    assert (ana.points, ana.wins, ana.streak, ana.on_fire) == (2, 1, 1, False)
    ana = scored(ana, (2, 1), 1, rated=True)  # +1
    assert ana.on_fire and ana.points == 3
    ana = scored(ana, (2, 1, 3, 4), 0, rated=True)  # second of four, on fire: 2 x 2
    assert (ana.points, ana.streak, ana.on_fire) == (7, 0, False)
    assert ana.games == 3 and ana.wins == 2


def test_a_game_a_player_was_not_rated_in_scores_nothing_and_ends_the_streak() -> None:
    ana = _s("ana", streak=3)
    after = scored(ana, (1, 2, 3, 4), 0, rated=False)
    assert (after.points, after.wins, after.streak, after.games) == (0, 0, 0, 1)


def test_a_seat_that_is_not_a_place_is_refused() -> None:
    with pytest.raises(ValueError, match="seat 4"):
        scored(_s("ana"), (1, 2, 3, 4), 4, rated=True)


def test_a_table_scores_each_of_the_arenas_players_once_and_nobody_else() -> None:
    standings = {p: _s(p) for p in ("ana", "bruno")}
    out = scored_table(standings, ["bruno", None, "ana", "zed"], (1, 2, 3, 4),
                       rated={"ana", "bruno", "zed"})  # fmt: skip
    assert set(out) == {"ana", "bruno"}
    assert out["bruno"].points == 3 and out["ana"].points == 1
    with pytest.raises(ValueError):
        scored_table(standings, ["ana"], (1, 2), rated=set())


def test_the_standings_go_by_points_then_wins_then_fewer_games_then_who_joined_first() -> None:
    rows = [
        _s("dora", 5, wins=1, games=3, joined=1),
        _s("ana", 5, wins=2, games=4),
        _s("carl", 5, wins=1, games=3, joined=0),
        _s("bea", 5, wins=1, games=2),
        _s("eve", 9),
    ]
    assert [s.player for s in ranked(rows)] == ["eve", "ana", "bea", "carl", "dora"]
    assert rank_of(rows, "carl") == 4 and rank_of(rows, "nobody") is None


def test_the_winner_is_the_leader_who_scored_and_nobody_when_none_did() -> None:
    assert winner([_s("ana", 2), _s("bea", 4)]) == _s("bea", 4)
    assert winner([_s("ana"), _s("bea")]) is None
    assert winner([]) is None


@pytest.mark.parametrize(
    ("waiting", "sizes"),
    [(0, []), (1, []), (2, [2]), (3, [3]), (4, [4]), (5, [3, 2]), (6, [3, 3]), (7, [4, 3]),
     (8, [4, 4]), (9, [3, 3, 3]), (13, [4, 3, 3, 3]), (400, [4] * 100)],
)  # fmt: skip
def test_the_waiting_sit_at_as_few_tables_as_hold_them_as_even_as_can_be(
    waiting: int, sizes: list[int]
) -> None:
    assert table_sizes(waiting) == sizes


@pytest.mark.parametrize("waiting", range(2, 60))
def test_every_waiting_player_but_a_lone_one_is_seated_once_at_a_table_of_two_to_four(
    waiting: int,
) -> None:
    players = [_s(f"p{i:03}", points=i % 7, joined=i) for i in range(waiting)]
    tables = pair(players)
    seated = [p for t in tables for p in t]
    assert sorted(seated) == sorted(s.player for s in players)
    assert all(MIN_TABLE <= len(t) <= MAX_TABLE for t in tables)


def test_neighbours_in_the_standings_meet() -> None:
    players = [_s("low1", 0), _s("top1", 9), _s("low2", 1), _s("top2", 8), _s("mid", 5)]
    assert pair(players) == [["top1", "top2", "mid"], ["low2", "low1"]]
    assert pair([_s("alone", 3)]) == []


def test_a_schedule_makes_the_current_arena_and_the_next() -> None:
    hourly = Schedule.parse("60:30")
    assert str(hourly) == "60:30"
    assert hourly.due(3600 + 10) == [(3600.0, 5400.0), (7200.0, 9000.0)]
    assert hourly.due(5400) == [(7200.0, 9000.0)]  # the first has ended
    assert hourly.arena_id(3600) == hourly.arena_id(3600.0) == "s60m30t3600"
    assert hourly.arena_id(3600) != Schedule.parse("60:20").arena_id(3600)


@pytest.mark.parametrize(
    "text", ["", "60", "60:0", "60:61", "7:5", "0:0", "x:30", "60:30:1", "-60:30", "99999:30"]
)
def test_a_schedule_that_does_not_make_sense_is_refused_by_name(text: str) -> None:
    with pytest.raises(ValueError, match=r"schedule|EVERY"):
        Schedule.parse(text)
