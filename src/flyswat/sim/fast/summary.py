"""A fast result condensed into the table both simulators print (:mod:`flyswat.sim.summary`)."""

from __future__ import annotations

import numpy as np

from flyswat import bots
from flyswat.sim.fast.batch import FastResult
from flyswat.sim.summary import Line, Summary


def _line(label: str, mask: np.ndarray, result: FastResult, wins: np.ndarray) -> Line:
    return Line(
        label=label,
        seat_games=int(mask.sum()),
        win_share=float(wins[mask].mean()),
        points=float(result.points[mask].mean()),
        flies=float(result.flies[mask].mean()),
        wrong=float(result.wrong[mask].mean()),
    )


def _spread(values: np.ndarray) -> tuple[float, int, int]:
    if not len(values):
        return (0.0, 0, 0)
    return (float(values.mean()), int(values.min()), int(values.max()))


def summary(result: FastResult) -> Summary:
    """By position from the start player, by level (in :data:`bots.LEVELS` order, then any
    custom), and game length in turns and slap rounds (rounds with a centre to slap, as the
    reference counts them). Needs at least one game."""
    wins = result.win_shares()
    pos = result.positions()
    labels = np.array(result.levels)[None, :].repeat(result.games, axis=0)
    names = [x for x in bots.LEVELS if x in result.levels]
    names += sorted(set(result.levels) - set(names))
    rounds = result.counter("rounds") - result.counter("empty_rounds")
    return Summary(
        games=result.games,
        positions=tuple(
            _line("start" if k == 0 else f"+{k}", pos == k, result, wins)
            for k in range(result.rules.seats)
        ),
        levels=tuple(_line(name, labels == name, result, wins) for name in names),
        turns=_spread(result.counter("turns")),
        rounds=_spread(rounds),
    )
