"""Observations and actions of the research environments, as fixed-size numpy arrays.

Everything here is a function of one seat's :class:`~flyswat.view.View` (R25) and of nothing
else, so an agent sees exactly what a human at that seat sees.

**Observation** (``float32``, :data:`OBS_SIZE` = 136 entries, all in [0, 1]):

=========  ====  ==========================================================================
offset     size  meaning
=========  ====  ==========================================================================
0          96    centre: 1 where fly ``i`` of :data:`flyswat.cards.DECK` lies in the centre
96         6     flies in the centre per colour (R Y G B P O), divided by 16
102        6     only in the *helped* observation: 1 for the most numerous colour(s) in
                 the centre (R14: what *is* allowed). The default, honest observation
                 leaves these 0: like people and bots, an agent judges them itself
108        7     the card that opened the round: swatter, or the fifth colour R…O (R12, R13)
115        8     draw-pile counts per seat, this seat first then clockwise, / 112; 0 past
                 the last seat
123        8     won-pile counts, same order, / 112
131        1     this seat's points (R23) / 288
132        1     value of the top card of this seat's won pile / 5: what a wrong slap costs
133        1     hands per player (R16) / 2
134        1     number of seats / 8
135        1     reveals so far / 224, at most 1
=========  ====  ==========================================================================

**Action** (``MultiDiscrete([97] * hands)``): one entry per hand (R16). Entry ``i < 96``
lays that hand on fly ``i`` of :data:`flyswat.cards.DECK`; :data:`NO_HAND` (96) lays none.
Fly index ``i`` is the same in the observation's centre block, so "slap what you see" is a
one-to-one map. An entry on a fly that is not in the centre, or repeating another hand's fly,
is not laid (the engine would refuse it, R16); the mask says which entries are legal.

**Action mask**: a tuple with one ``int8`` array of 97 per hand, 1 where the entry is legal:
the flies in the centre, and :data:`NO_HAND` always. This is the shape
``MultiDiscrete.sample(mask=...)`` takes.
"""

from __future__ import annotations

import numpy as np
from gymnasium import spaces

from flyswat.rules import allowed
from flyswat.view import View

FLIES = 96
NO_HAND = 96
ACTIONS = 97
OBS_SIZE = 136
MAX_SEATS = 8

_CENTRE, _COUNTS, _TOP, _TRIGGER = 0, 96, 102, 108
_DRAW, _WON, _POINTS, _TOP_WON, _HANDS, _SEATS, _TURN = 115, 123, 131, 132, 133, 134, 135


def observation_space(hands: int) -> spaces.Dict:
    """The observation space of one seat: the vector and the action mask."""
    return spaces.Dict(
        {
            "observation": spaces.Box(0.0, 1.0, (OBS_SIZE,), dtype=np.float32),
            "action_mask": spaces.Tuple([spaces.MultiBinary(ACTIONS) for _ in range(hands)]),
        }
    )


def action_space(hands: int) -> spaces.MultiDiscrete:
    """The action space of one seat: a fly index or :data:`NO_HAND` per hand."""
    return spaces.MultiDiscrete([ACTIONS] * hands, dtype=np.int64)


def encode(v: View, helped: bool = False) -> np.ndarray:
    """The observation vector of ``v`` (layout in the module docstring); ``helped`` fills in
    the allowed colours (:func:`flyswat.rules.allowed`, R14)."""
    if v.seat is None:
        raise ValueError("an observation belongs to a seat, not to a spectator")
    obs = np.zeros(OBS_SIZE, dtype=np.float32)
    counts = [0] * 6
    for card in v.centre:
        obs[_CENTRE + card.index] = 1.0
        if card.colour is not None:
            counts[card.colour.order] += 1
    obs[_COUNTS : _COUNTS + 6] = np.array(counts, dtype=np.float32) / 16.0
    if helped:
        for c in allowed(v.centre):
            obs[_TOP + c.order] = 1.0
    if v.round is not None:
        colour = v.round.trigger.colour
        obs[_TRIGGER + (0 if colour is None else 1 + colour.order)] = 1.0
    for k in range(v.seats):
        seat = (v.seat + k) % v.seats
        obs[_DRAW + k] = v.draw_counts[seat] / 112.0
        obs[_WON + k] = v.won_counts[seat] / 112.0
    obs[_POINTS] = sum(c.value for c in v.won) / 288.0
    obs[_TOP_WON] = v.won[-1].value / 5.0 if v.won else 0.0
    obs[_HANDS] = v.hands / 2.0
    obs[_SEATS] = v.seats / MAX_SEATS
    obs[_TURN] = min(1.0, v.turn / 224.0)
    return obs


def action_mask(v: View) -> tuple[np.ndarray, ...]:
    """The legal entries of each hand's action in ``v`` (see the module docstring)."""
    mask = np.zeros(ACTIONS, dtype=np.int8)
    mask[NO_HAND] = 1
    if v.round is not None:
        for card in v.centre:
            mask[card.index] = 1
    return tuple(mask.copy() for _ in range(v.hands))


def observe(v: View, helped: bool = False) -> dict[str, object]:
    """The full observation of ``v``: ``{"observation": ..., "action_mask": ...}``."""
    return {"observation": encode(v, helped), "action_mask": action_mask(v)}
