"""The one round driver of bot games: the simulator and the research environments play
every slap round through it, on the reference engine.

A driver lays hands the way a table of people would if every hand's reaction time were known:
all planned hands of a round, merged by time (ties by seat), each laid while the slap window
is open (:meth:`flyswat.rules.Rules.in_window`, R21) and dropped when it is not; then the
round closes, stacking the hands by those times (R17, :meth:`flyswat.engine.Game.close_round`).
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping

from flyswat import bots
from flyswat.cards import Card
from flyswat.engine import Game, Round
from flyswat.view import view

#: A planned hand: (reaction time in ms, seat, card).
Planned = tuple[int, int, Card]


def advance(game: Game) -> Round | None:
    """Reveal until a slap round with something to slap is open (R12, R13; a round with an
    empty centre closes at once, R15) or the game is over (R22); the open round, or None."""
    while not game.over and game.round is None:
        game.reveal()
    return game.round


def bot_hands(
    game: Game, levels: Mapping[int, bots.LevelLike], rngs: Mapping[int, random.Random]
) -> list[Planned]:
    """The hands the bots at the seats of ``levels`` plan in the open round, each from its
    own view (:func:`flyswat.bots.decide`) and its own generator in ``rngs``."""
    return [
        (h.ms, seat, h.card)
        for seat, level in levels.items()
        for h in bots.decide(level, view(game, seat), rngs[seat])
    ]


def play_round(game: Game, planned: Iterable[Planned]) -> tuple[Round, list[int]]:
    """Lay the ``planned`` hands of the open round in the order of their times, ties by seat,
    and close it; returns the closed round and each seat's hands that came too late (R21)."""
    late = [0] * game.rules.seats
    for ms, seat, card in sorted(planned, key=lambda x: (x[0], x[1])):
        if game.rules.in_window(ms):
            game.slap(seat, card, ms)
        else:
            late[seat] += 1
    return game.close_round(), late


def wrong_hands(r: Round, seats: int) -> list[int]:
    """Each seat's hands on a fly of a colour not allowed in the closed round ``r`` (R19)."""
    wrong = [0] * seats
    for s in r.slaps:
        if s.card.colour not in r.allowed:
            wrong[s.seat] += 1
    return wrong
