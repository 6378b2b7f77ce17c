"""The fair-play detector, sans I/O: a player's hands out of records, and what they weigh."""

from __future__ import annotations

import random

import pytest

from flyswat import bots, fairplay
from flyswat.fairplay import GameHands, Hand, assess, from_record


def games_of(times: list[float], per_game: int = 10, missed: int = 0) -> list[GameHands]:
    """Games of first hands at ``times``, each right and won, ``per_game`` rounds a game."""
    out = []
    for k in range(0, len(times), per_game):
        hands = tuple(Hand(t, True, True, True) for t in times[k : k + per_game])
        out.append(GameHands(hands, len(hands) + missed, missed))
    return out


def person(level: bots.Level, n: int, seed: int) -> list[float]:
    rng = random.Random(seed)
    return [max(level.floor_ms, bots.ex_gauss(rng, level.mu_ms, level.sigma_ms, level.tau_ms))
            for _ in range(n)]  # fmt: skip


def test_a_players_hands_are_read_from_a_record_with_their_first_hand_of_each_round() -> None:
    record = {"turns": [
        {"seat": 0, "card": "R1-1"},
        {"seat": 1, "card": "S-1", "round": {"allowed": ["R"], "slaps": [
            {"seat": 1, "card": "G2-1", "ms": 700}, {"seat": 0, "card": "R1-1", "ms": 400},
            {"seat": 1, "card": "R1-1", "ms": 450}],
            "won": [{"seat": 0, "card": "R1-1"}], "penalties": []}},
        {"seat": 0, "card": "S-2", "round": {"allowed": ["G"], "slaps": [], "won": []}},
        {"seat": 1, "card": "S-3", "round": {"allowed": [], "slaps": [], "won": []}},  # R15
    ]}  # fmt: skip
    assert from_record(record, 1, too_fast=2) == GameHands(
        (Hand(450, True, True, False), Hand(700, False, False, False)), 2, 1, 2
    )
    mine = from_record(record, 0)
    assert mine == GameHands((Hand(400, True, True, True),), 2, 1)
    assert GameHands.from_json(mine.to_json()) == mine


@pytest.mark.parametrize("ms", [130, 160, 250, 480, 700])
@pytest.mark.parametrize("spread", [0.0, 10.0, 25.0])  # 30: bench/fairplay.py measures it
def test_a_script_with_little_spread_is_flagged_within_five_games_whatever_its_speed(
    ms: float, spread: float
) -> None:
    rng = random.Random(f"{ms}:{spread}")
    verdict = assess(games_of([rng.gauss(ms, spread) for _ in range(50)]))
    assert verdict.flagged and verdict.score >= 1
    assert "spread" in verdict.reason or "median" in verdict.reason, verdict.reason


@pytest.mark.parametrize("name", bots.LEVELS)
def test_people_modelled_by_every_bot_level_are_not_flagged_over_a_hundred_games(
    name: str,
) -> None:
    level = bots.params(name)
    games = games_of(person(level, 1000, seed=7), missed=1)
    for n in range(1, len(games) + 1):
        verdict = assess(games[:n])
        assert not verdict.flagged, (n, verdict)
    assert verdict.reason == "nothing unlike a person's play" and verdict.games == 100


def test_too_few_hands_are_not_weighed() -> None:
    verdict = assess(games_of([160.0] * (fairplay.MIN_STEADY - 1)))
    assert not verdict.flagged and verdict.reason.startswith("too few hands")


def test_a_fast_script_with_a_human_looking_spread_is_flagged_for_its_speed() -> None:
    rng = random.Random(3)
    times = [bots.ex_gauss(rng, 300, 60, 90) for _ in range(120)]
    verdict = assess(games_of(times, missed=1))  # not flawless: a round missed a game
    assert verdict.flagged and "median first hand" in verdict.reason


def test_times_with_no_slow_tail_are_flagged_over_many_rounds() -> None:
    rng = random.Random(4)
    times = [rng.gauss(700, 110) for _ in range(600)]  # human speed and spread, no tail
    verdict = assess(games_of(times))
    assert verdict.flagged and "no slow tail" in verdict.reason, verdict


def test_claims_faster_than_humanly_possible_in_several_games_flag_a_player() -> None:
    games = games_of(person(bots.NORMAL, 40, seed=5))
    claimed = [GameHands(g.hands, g.rounds, g.missed, too_fast=2) for g in games[:2]]
    assert not assess(games).flagged
    verdict = assess(claimed + games[2:])
    assert verdict.flagged and "faster than humanly possible" in verdict.reason


def test_only_the_latest_window_of_games_is_weighed() -> None:
    scripted = games_of([200.0] * 20)
    honest = games_of(person(bots.HARD, 10 * fairplay.WINDOW, seed=6))
    assert assess(scripted).flagged
    assert not assess(scripted + honest).flagged  # a hundred honest games since
