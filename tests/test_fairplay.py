"""The fair-play detector, sans I/O: a player's hands out of records, and what they weigh."""

from __future__ import annotations

import dataclasses
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


def played(level: bots.Level, games: int, seed: int, bad_days: float = 0.1,
           rounds: int = 12) -> list[GameHands]:  # fmt: skip
    """``games`` games of a player at ``level``, ``rounds`` rounds each: first hands from its
    ex-Gaussian, a wrong fly at its ``misjudge`` rate, a round missed at its ``lapse`` rate;
    a ``bad_days`` share of games slower by 120 ms with a longer tail and twice the mistakes
    (as ``bench/fairplay.py`` models people)."""
    rng = random.Random(seed)
    out = []
    for _ in range(games):
        bad = rng.random() < bad_days
        mu, tau = level.mu_ms + 120 * bad, level.tau_ms * (1.5 if bad else 1.0)
        hands, missed = [], 0
        for _ in range(rounds):
            if rng.random() < level.lapse * (3 if bad else 1):
                missed += 1
                continue
            ms = max(level.floor_ms, bots.ex_gauss(rng, mu, level.sigma_ms, tau))
            right = rng.random() >= level.misjudge * (2 if bad else 1)
            hands.append(Hand(ms, True, right, right))
        out.append(GameHands(tuple(hands), rounds, missed))
    return out


def like(level: bots.Level, **changes: float) -> bots.Level:
    return dataclasses.replace(level, **changes)


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
    games = played(bots.params(name), 100, seed=7)
    for n in range(1, len(games) + 1):
        verdict = assess(games[:n])
        assert not verdict.flagged, (n, verdict)
    assert verdict.reason == "nothing unlike a person's play" and verdict.games == 100


def test_a_few_close_hands_in_a_persons_first_game_are_not_weighed_for_spread() -> None:
    # A person's first game: half of its 15 first hands within 25 ms of each other, by chance.
    times = [552.0, 525, 568, 563, 543, 555, 541, 552, 777, 470, 521, 414, 568, 540, 632]
    verdict = assess(games_of(times, per_game=15))
    assert not verdict.flagged and "steady" not in verdict.evidence, verdict


# A script with noise added to look human: a person's spread and tail at the pace of the
# best players, hardly ever wrong, and the same pace in every game.
NOISY = like(bots.HARD, mu_ms=400, sigma_ms=60, tau_ms=110, misjudge=0.004, lapse=0.0)


def test_a_top_players_pace_with_a_scripts_accuracy_and_steadiness_is_flagged_in_20_games() -> None:
    games = played(NOISY, 20, seed=11, bad_days=0.0)
    verdict = assess(games)
    assert verdict.flagged and verdict.reason.startswith("surer, steadier and quicker"), verdict
    assert verdict.evidence["fast"] < 1 and verdict.evidence["steady"] < 1  # not alone


def test_the_same_pace_with_a_persons_mistakes_and_bad_days_is_not_flagged() -> None:
    best = like(NOISY, misjudge=0.02, lapse=0.01)
    games = played(best, 100, seed=11)
    assert not any(assess(games[:n]).flagged for n in range(1, 101))


def test_a_slow_careful_player_with_a_steady_pace_is_not_flagged() -> None:
    # Never wrong, the same pace every game: at a median far from the best players', no
    # script's gain in it (the joint evidence is weighed only at a top player's pace).
    careful = like(bots.NORMAL, mu_ms=620, misjudge=0.0, lapse=0.0)
    verdict = assess(played(careful, 100, seed=12, bad_days=0.0))
    assert not verdict.flagged and "uncanny" not in verdict.evidence, verdict


def test_too_few_hands_are_not_weighed() -> None:
    verdict = assess(games_of([160.0] * (fairplay.MIN_STEADY - 1)))
    assert not verdict.flagged and verdict.reason.startswith("too few hands")


def test_a_fast_script_with_a_human_looking_spread_is_flagged_for_its_speed() -> None:
    rng = random.Random(3)
    times = [bots.ex_gauss(rng, 300, 60, 90) for _ in range(120)]
    verdict = assess(games_of(times, missed=1))  # not flawless: a round missed a game
    assert verdict.flagged and verdict.evidence["fast"] >= 1, verdict


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
    scripted = games_of([200.0] * 40)
    honest = played(bots.HARD, fairplay.WINDOW, seed=6)
    assert assess(scripted).flagged
    assert not assess(scripted + honest).flagged  # a hundred honest games since
