"""The bots' fixed ratings: many simulated bot games, rated with openskill's Plackett–Luce.

``python -m flyswat.sim.calibrate [--games N] [--seed S]`` plays ``N`` bot games with the
reference simulator (:func:`flyswat.sim.reference.play_game`), 2 to 6 seats, each seat's level
drawn at random, with the short game (56 cards removed, R6) and the default slap window;
then it fits one rating per level. Each level is one player whose rating every one of its
seats in a game starts from, with a fixed ``sigma`` of :data:`FIT_SIGMA` (so that every game
moves it as much: a constant step, not one that shrinks to nothing after the first games);
the game is rated as openskill rates a game of people (places as ranks, shared places tied)
and each level's new ``mu`` is the mean of its seats' new ``mu``. A level's rating is the
mean over the second half of the games of its ``mu`` less ``normal``'s (the spread of that
difference is printed too), added to openskill's default ``mu`` (25), where ``normal`` sits:
a new player is presumed as strong as a normal bot. The figures it prints are the ones in
:data:`flyswat.players.ratings.BOT_RATINGS` (see ``docs/PLAYERS.md``).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
from collections.abc import Sequence

from flyswat.bots import LEVELS
from flyswat.rules import Rules
from flyswat.sim.reference import play_game

#: The sigma each level's rating is rated with while it is fitted.
FIT_SIGMA = 3.0


def calibrate(games: int, seed: int = 0) -> dict[str, tuple[float, float, float]]:
    """``level -> (mu, spread of mu, share of wins per seat)`` from ``games`` simulated games."""
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    rng = random.Random(seed)
    mu = dict.fromkeys(LEVELS, model.mu)
    kept: dict[str, list[float]] = {lv: [] for lv in LEVELS}
    wins = dict.fromkeys(LEVELS, 0.0)
    seen = dict.fromkeys(LEVELS, 0)
    for g in range(games):
        seats = rng.randint(2, 6)
        levels = [rng.choice(LEVELS) for _ in range(seats)]
        stats = play_game(Rules(seats, remove=56), levels, f"calibrate-{seed}-{g}").stats
        teams = [[model.rating(mu=mu[lv], sigma=FIT_SIGMA)] for lv in levels]
        rated = model.rate(teams, ranks=[float(p) for p in stats.places])
        for lv in set(levels):
            seats_of = [i for i, x in enumerate(levels) if x == lv]
            mu[lv] = sum(rated[i][0].mu for i in seats_of) / len(seats_of)
        if g >= games // 2:
            for lv in LEVELS:  # against normal: the ratings drift together, not apart
                kept[lv].append(mu[lv] - mu["normal"])
        for i, lv in enumerate(levels):
            wins[lv] += stats.wins()[i]
            seen[lv] += 1
    mean = {lv: sum(kept[lv]) / max(1, len(kept[lv])) for lv in LEVELS}
    spread = {lv: statistics.pstdev(kept[lv]) if kept[lv] else 0.0 for lv in LEVELS}
    return {lv: (model.mu + mean[lv], spread[lv], wins[lv] / max(1, seen[lv])) for lv in LEVELS}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    for level, (m, s, w) in calibrate(args.games, args.seed).items():
        print(f"{level:7s} mu={m:6.2f} (spread {s:4.2f})  wins per seat: {w:.3f}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
