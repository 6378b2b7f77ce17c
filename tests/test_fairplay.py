"""The fair-play detector, sans I/O: a player's hands out of records, and what they weigh."""

from __future__ import annotations

import dataclasses
import math
import random
import statistics
from typing import Any

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


#: Rounds' choices (``bots.choice_bits``) about as often as in games of four at Play now's
#: length (3,737 rounds of bots' games: one colour 7 %, 3 bits 28 %, ...).
BITS, BITS_SHARE = [0.0, 2.0, 2.58, 3.0, 3.58, 4.0, 4.58], [7, 8, 17, 28, 14, 17, 4]


#: A person's pace drifting within a game (``bench/fairplay.py``'s ``Pace``): its stationary
#: sd (ms), how much of it carries from one round to the next, the slowing after an error.
DRIFT = (70.0, 0.75, 40.0)


def played(level: bots.Level, games: int, seed: int, bad_days: float = 0.1,
           rounds: int = 12,
           drift: tuple[float, float, float] | None = None) -> list[GameHands]:  # fmt: skip
    """``games`` games of a player at ``level``, ``rounds`` rounds each: first hands from its
    ex-Gaussian, moved by its ``choice_ms`` per bit of the round's choice (as
    ``bots.reaction_times``), a wrong fly at its ``misjudge`` rate, a round missed at its
    ``lapse`` rate; a ``bad_days`` share of games slower by 120 ms with a longer tail and
    twice the mistakes (as ``bench/fairplay.py`` models people); with a ``drift`` (sd, phi,
    slowing after an error), a pace that drifts from round to round as the bench's people's."""
    rng = random.Random(seed)
    sd, phi, pes = drift or (0.0, 0.0, 0.0)
    out = []
    for _ in range(games):
        bad = rng.random() < bad_days
        mu, tau = level.mu_ms + 120 * bad, level.tau_ms * (1.5 if bad else 1.0)
        hands, missed = [], 0
        d = rng.gauss(0.0, sd)
        for _ in range(rounds):
            bits = rng.choices(BITS, BITS_SHARE)[0]
            d = phi * d + rng.gauss(0.0, sd * math.sqrt(1 - phi**2))
            if rng.random() < level.lapse * (3 if bad else 1):
                missed += 1
                continue
            ms = bots.ex_gauss(rng, mu, level.sigma_ms, tau) + d
            ms = max(level.floor_ms, ms + level.choice_ms * (bits - bots.TYPICAL_BITS))
            right = rng.random() >= level.misjudge * (2 if bad else 1)
            hands.append(Hand(ms, True, right, right, bits))
            d += 0.0 if right else pes
        out.append(GameHands(tuple(hands), rounds, missed))
    return out


def like(level: bots.Level, **changes: float) -> bots.Level:
    return dataclasses.replace(level, **changes)


def people(name: str) -> bots.Level:
    """People at a bot level: its play, with people's slope over a harder choice."""
    return like(bots.params(name), choice_ms=bots.PEOPLE_CHOICE_MS[name])


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


@pytest.mark.parametrize("drifting", [False, True])
@pytest.mark.parametrize("name", bots.LEVELS)
def test_people_modelled_by_every_bot_level_are_not_flagged_over_a_hundred_games(
    name: str, drifting: bool
) -> None:
    # With a pace that drifts within the game at its strongest (0.6 of their own sd): a
    # Gaussian part that lowers the skewness of their times (SKEW_FLOOR allows for it).
    p = people(name)
    drift = (0.6 * math.hypot(p.sigma_ms, p.tau_ms), 0.75, 40.0) if drifting else None
    games = played(p, 100, seed=7, drift=drift)
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
    best = like(NOISY, misjudge=0.02, lapse=0.01, choice_ms=40)
    games = played(best, 100, seed=11)
    assert not any(assess(games[:n]).flagged for n in range(1, 101))


def test_a_slow_careful_player_with_a_steady_pace_is_not_flagged() -> None:
    # Never wrong, the same pace every game: at a median far from the best players', no
    # script's gain in it (the joint evidence is weighed only at a top player's pace).
    careful = like(people("normal"), mu_ms=620, misjudge=0.0, lapse=0.0)
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
    honest = played(people("hard"), fairplay.WINDOW, seed=6)
    assert assess(scripted).flagged
    assert not assess(scripted + honest).flagged  # a hundred honest games since


def test_a_hands_round_choice_is_kept_with_it_and_old_stored_hands_read_without_it() -> None:
    game = GameHands((Hand(480, True, True, True, 3.0), Hand(700, False, False, False, 2.58)), 2, 0)
    assert game.to_json()["h"] == [[480, 7, 3.0], [700, 0, 2.58]]
    assert GameHands.from_json(game.to_json()) == game
    old = GameHands.from_json({"h": [[480, 7]], "r": 1, "m": 0})
    assert old.hands == (Hand(480, True, True, True, None),)


def test_each_rounds_choice_is_read_off_the_centre_the_record_replays_to() -> None:
    from flyswat.engine import Game
    from flyswat.record import to_record
    from flyswat.rules import Rules
    from flyswat.sim import driver

    game = Game.new(Rules(seats=4, remove=56), "bits", 0)
    levels = dict.fromkeys(range(4), bots.HARD)
    rngs = {k: random.Random(k) for k in range(4)}
    seen = []
    while driver.advance(game) is not None:
        seen.append(bots.centre_bits(game.centre))  # the centre its trigger was shown over
        driver.play_round(game, driver.bot_hands(game, levels, rngs))
    seats = [{"name": f"P{i}", "kind": "human"} for i in range(4)]
    record = to_record(game, seats, id="bits", started_at="2026-12-04T00:00:00Z")
    bits = fairplay.round_bits(record)
    assert list(bits.values()) == pytest.approx(seen) and len(seen) > 5
    mine = from_record(record, 0)
    assert all(h.bits == bits[i] for i, h in zip(mine_turns(record, 0), mine.hands, strict=True))
    broken = dict(record, deal=[])  # a record that does not replay: no choices, hands kept
    assert fairplay.round_bits(broken) == {}
    assert [h.ms for h in from_record(broken, 0).hands] == [h.ms for h in mine.hands]


def mine_turns(record: dict[str, Any], seat: int) -> list[int]:
    """The turn index of each of ``seat``'s hands, in from_record's order."""
    return [i for i, t in enumerate(record["turns"]) if t.get("round") and t["round"]["allowed"]
            for s in t["round"]["slaps"] if s["seat"] == seat]  # fmt: skip


def test_the_choice_slope_is_a_persons_hick_hyman_slope_whatever_their_days() -> None:
    # 40 ms per bit (bots.PEOPLE_CHOICE_MS["hard"]), with or without bad days: each game's
    # first hands are taken about the game's own means, so a slow day moves no slope.
    for bad_days in (0.0, 0.3):
        slope, se, n = fairplay.choice_slope(played(people("hard"), 100, 21, bad_days))
        assert n > 1000 and se < 5 and abs(slope - 40) < 3 * se, (slope, se)
    slope, se, _ = fairplay.choice_slope(played(NOISY, 100, 22))
    assert abs(slope) < 3 * se  # noise added to a fixed time: no slope
    assert fairplay.choice_slope(games_of([500.0] * 30)) == (0.0, math.inf, 0)  # no choices


def least_squares_slope(games: list[GameHands]) -> tuple[float, float]:
    """The least-squares slope of first hands on bits, each game about its own means, and
    its textbook standard error: what ``choice_slope`` starts from."""
    pts = []
    for g in games:
        xy = [(h.bits, h.ms) for h in g.hands if h.first and h.bits is not None]
        mx, my = statistics.fmean(x for x, _ in xy), statistics.fmean(y for _, y in xy)
        pts += [(x - mx, y - my) for x, y in xy]
    sxx = sum(x * x for x, _ in pts)
    b = sum(x * y for x, y in pts) / sxx
    rss = sum((y - b * x) ** 2 for x, y in pts)
    return b, math.sqrt(rss / (len(pts) - len(games) - 1) / sxx)


@pytest.mark.parametrize("seed", [41, 42, 43])
def test_the_choice_slope_heeds_the_slow_tail_less_than_least_squares(seed: int) -> None:
    # A long tail under a narrow spread (a noisy script's σ 40, τ 160): least squares' error
    # is the whole spread's, √(σ² + τ²) ≈ 165 ms; the ex-Gaussian's score weighs the sharp
    # rise more than the tail, an error nearer σ's. Both find the true slope.
    tailed = like(NOISY, sigma_ms=40, tau_ms=160, choice_ms=30)
    games = played(tailed, 100, seed=seed, bad_days=0.0)
    slope, se, _ = fairplay.choice_slope(games)
    ols, ols_se = least_squares_slope(games)
    assert se < 0.8 * ols_se, (se, ols_se)  # about 0.72 here: σ is fitted, each game centred
    assert abs(slope - 30) < 3 * se and abs(ols - 30) < 3 * ols_se, (slope, se, ols, ols_se)


def test_a_top_players_pace_indifferent_to_the_choice_is_what_tips_the_joint_evidence() -> None:
    # As sure and as steady as the best people (a mistake in 100 first hands, no bad day, as
    # some people have over 20 games): the same play with people's slope over a harder
    # choice is not flagged in 100 games; without it, it is within 20.
    sure = like(bots.HARD, mu_ms=420, misjudge=0.01, lapse=0.005)
    person = played(like(sure, choice_ms=40), 100, seed=24, bad_days=0.0)
    assert not any(assess(person[:n]).flagged for n in range(1, 101))
    script = played(sure, 20, seed=24, bad_days=0.0)
    verdict = assess(script)
    assert verdict.flagged and "per bit of a round's choice" in verdict.reason, verdict
    without = [GameHands(tuple(dataclasses.replace(h, bits=None) for h in g.hands), g.rounds,
                         g.missed) for g in script]  # fmt: skip
    assert not assess(without).flagged  # the three other legs alone: not enough


def test_a_persons_quick_easy_rounds_are_not_taken_for_a_missing_slow_tail() -> None:
    # A beginner's 80 ms per bit makes a one-colour round 240 ms quicker than a typical one:
    # a left tail that lowers the skewness of their times as they are. Their tail is weighed
    # with each round's choice taken out, by their own slope.
    beginner = like(people("easy"), tau_ms=150, sigma_ms=110)
    games = played(beginner, 100, seed=24, bad_days=0.0)
    times = [h.ms for g in games for h in g.hands if h.first]
    raw = fairplay._skewness(times, statistics.fmean(times), statistics.pstdev(times))
    net = fairplay._net_of_choice(games)
    assert fairplay._skewness(net, statistics.fmean(net), statistics.pstdev(net)) > raw + 0.2
    assert assess(games).evidence["tailless"] < 1


def test_one_rounds_time_tells_of_the_next_for_a_drifting_pace_and_not_for_fresh_noise() -> None:
    # Independent times, games of 3 to 12 first hands: each game's mean taken out pulls the
    # raw lag-1 autocorrelation down by about 1 / its hands; the estimator adds that back, so
    # a script's fresh noise measures about 0, slow days or not.
    for bad_days in (0.0, 0.3):
        for rounds in (4, 12):
            rho, se, pairs = fairplay.serial_correlation(
                played(NOISY, 400, seed=31, bad_days=bad_days, rounds=rounds)
            )
            assert abs(rho) < 3 * se, (rho, se, bad_days, rounds)
    # A pace that drifts (a third of a hard player's variance, 0.75 carried over): about
    # 0.75 · 70² / (70² + 60² + 120² + 40²·1.1) ≈ 0.14 before each game's mean is out.
    rho, se, pairs = fairplay.serial_correlation(played(people("hard"), 400, 32, drift=DRIFT))
    assert pairs > 4000 and se < 0.02 and 0.06 < rho < 0.2, (rho, se)
    # Each round's choice is taken out first: a steep slope with no drift is no dependence.
    rho, se, _ = fairplay.serial_correlation(played(like(NOISY, choice_ms=120), 400, seed=33))
    assert abs(rho) < 3 * se, (rho, se)
    assert fairplay.serial_correlation(games_of([500.0, 600.0] * 10, per_game=2))[2] == 0


def test_the_lag_one_autocorrelation_is_the_textbook_one_for_one_long_game() -> None:
    xs = [500.0, 620.0, 580.0, 450.0, 700.0, 690.0, 510.0, 530.0]
    rho, se, pairs = fairplay.serial_correlation(games_of(xs, per_game=len(xs)))
    m = statistics.fmean(xs)
    ys = [x - m for x in xs]
    r1 = sum(ys[i] * ys[i + 1] for i in range(len(ys) - 1)) / sum(y * y for y in ys)
    assert pairs == 7 and se == pytest.approx(1 / math.sqrt(7))
    assert rho == pytest.approx(r1 + 1 / len(xs))  # less the bias of independent times


def test_a_top_players_pace_without_a_persons_drift_is_what_the_fifth_leg_weighs() -> None:
    # Sure, steady, quick and slowed by a harder choice as people are: with a person's drift
    # the joint evidence says nothing over 100 games; the same play with its noise drawn
    # afresh each round is weighed as less like a person's by the fifth leg.
    sure = like(bots.HARD, mu_ms=420, misjudge=0.01, lapse=0.005, choice_ms=40)
    person = played(sure, 100, seed=34, bad_days=0.0, drift=DRIFT)
    assert not any(assess(person[:n]).flagged for n in range(1, 101))
    script = played(sure, 100, seed=34, bad_days=0.0)
    assert assess(script).evidence["uncanny"] > assess(person).evidence["uncanny"]
    assert "lag-1 autocorrelation" in assess(script).reason or not assess(script).flagged


def test_the_f_and_binomial_chances_are_the_textbook_ones() -> None:
    # F(2, d2) has a closed form, 1 − (1 + 2f/d2)^(−d2/2); F(d1, d2) at f is 1 less F(d2, d1)
    # at 1/f; with d2 large, F(d1, d2)·d1 is a χ² with d1 degrees (χ²(2) ≤ x: 1 − e^(−x/2)).
    for f, d2 in ((0.3, 10.0), (1.0, 58.0), (4.0, 200.0)):
        assert fairplay._f_cdf(f, 2, d2) == pytest.approx(1 - (1 + 2 * f / d2) ** (-d2 / 2))
    for f, d1, d2 in ((0.7, 19, 200), (1.3, 4, 58), (0.2, 5, 7)):
        assert fairplay._f_cdf(f, d1, d2) == pytest.approx(1 - fairplay._f_cdf(1 / f, d2, d1))
    assert fairplay._f_cdf(1.5, 2, 1e7) == pytest.approx(1 - math.exp(-1.5), rel=1e-5)
    assert fairplay._binomial_cdf(0, 63, 0.02) == pytest.approx(0.98**63)
    assert fairplay._binomial_cdf(1, 240, 0.02) == pytest.approx(0.98**240 + 240 * 0.02 * 0.98**239)


def test_no_mistake_in_a_few_hands_never_weighs_more_than_its_chance_says() -> None:
    # A person at people's fewest mistakes (2 % of first hands) scores 1.645 or more on
    # ``surer`` at most 5 % of the time, whatever the number of hands: the exact binomial
    # chance. The normal approximation of the count gave no mistake in 140 hands 1.67, a
    # chance of 5.9 %.
    for n in (60, 140, 240, 600):
        beyond = sum(fairplay._binomial_cdf(w, n, 0.02) - fairplay._binomial_cdf(w - 1, n, 0.02)
                     for w in range(n + 1) if fairplay.surer(w, n) >= 1.645)  # fmt: skip
        assert beyond <= 0.05, (n, beyond)
    assert fairplay.surer(0, 63) == pytest.approx(-statistics.NormalDist().inv_cdf(0.98**63))
    assert fairplay.surer(0, 240) > 2.3 > (240 * 0.02) ** 0.5  # more than the approximation


@pytest.mark.parametrize("games", [5, 20])
def test_a_pace_that_varies_from_game_to_game_as_little_as_peoples_least_scores_as_chance(
    games: int,
) -> None:
    # Games of 12 first hands whose pace moves from game to game by just enough for an F
    # ratio of DRIFT_FLOOR on average (a game's shift of sd √(0.5 / 12) of the spread):
    # ``steadier`` is then a standard score, about 0 on average and beyond 1.645 about 5 %
    # of the time, over 5 games as over 20 (the normal approximation of the F ratio, with a
    # standard error 1.5 times too small, was beyond it 9 % of the time over 5 games and
    # 13 % over 20, its sd 1.6).
    rng = random.Random(games)
    shift = math.sqrt((fairplay.DRIFT_FLOOR - 1) / 12)
    zs = []
    for _ in range(2000):
        groups = [[rng.gauss(0, 1) + d for _ in range(12)] for d in
                  [rng.gauss(0, shift) for _ in range(games)]]  # fmt: skip
        ratio, k = fairplay._between_games(games_of([x for g in groups for x in g], per_game=12))
        zs.append(fairplay.steadier(ratio, k, 12 * games))
    assert abs(statistics.fmean(zs)) < 0.1 and 0.9 < statistics.pstdev(zs) < 1.1
    assert 0.035 < sum(z >= 1.645 for z in zs) / len(zs) < 0.065
