"""Many games stepped at once in the compiled rules: the kernel side of
:class:`flyswat.env.vector.SoloVectorEnv`.

Each game is one row of ``wi`` (:mod:`flyswat.sim.fast.kernel`), with one learning seat and bots
at the others. A step plays the open slap round with the learner's action, as
:class:`flyswat.env.parallel.FlyswatParallelEnv` does on the engine: the legal entries of
the action (flies in the centre, no fly twice, at most ``hands``), their times drawn from the
learner's reaction model, the bots' hands (:func:`flyswat.sim.fast.policy.decide`), all laid by
time, ties by seat, within the window (R21); then it reveals up to the next round with
something to slap (R15 rounds close by themselves) or the end (R22), and writes the
observation and mask of :mod:`flyswat.env.encoding` — bit for bit the same numbers.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from flyswat.sim.fast import kernel, policy, rng
from flyswat.sim.fast.kernel import (
    CARDS,
    COUNT,
    FLIES,
    N_CENTRE,
    N_WON,
    OVER,
    TRIGGER,
    TURN,
    WON,
    bot_hands,
    lay,
    resolve,
    reveal,
)
from flyswat.sim.fast.policy import CENTRE, CNT, OUT_CARDS, OUT_MS, PARAMS, ST

NO_HAND = 96
ACTIONS = 97


@njit(cache=True)
def advance(wi: np.ndarray, seats: int, counters: np.ndarray) -> None:
    """Reveal until a slap round with something to slap is open, or the game is over."""
    while wi[OVER] == 0:
        if reveal(wi, seats, counters) == 1:
            policy.judge_round(wi, wi[N_CENTRE])  # what the bots will take for allowed
            return


@njit(cache=True)
def encode(
    wi: np.ndarray,
    seat: int,
    seats: int,
    hands: int,
    helped: bool,
    obs: np.ndarray,
    mask: np.ndarray,
) -> None:
    """The observation and action mask of ``seat`` (:mod:`flyswat.env.encoding`)."""
    obs[:] = 0.0
    mask[:, :] = 0
    mask[:, NO_HAND] = 1
    open_round = wi[TRIGGER] >= 0 and wi[OVER] == 0
    most = 0
    for c in range(6):
        obs[96 + c] = wi[CNT + c] / 16.0
        most = max(most, wi[CNT + c])
    if helped and most > 0:
        for c in range(6):
            if wi[CNT + c] == most:
                obs[102 + c] = 1.0
    for k in range(wi[N_CENTRE]):
        card = wi[CENTRE + k]
        obs[card] = 1.0
        if open_round:
            mask[:, card] = 1
    if open_round:
        t = wi[TRIGGER]
        obs[108 + (0 if t >= FLIES else 1 + t // 16)] = 1.0
    for k in range(seats):
        s = (seat + k) % seats
        obs[115 + k] = wi[COUNT + s] / 112.0
        obs[123 + k] = wi[N_WON + s] / 112.0
    obs[131] = kernel.points(wi, seat) / 288.0
    n = wi[N_WON + seat]
    if n > 0:
        obs[132] = policy.VALUES[wi[WON + CARDS * seat + n - 1] % 16] / 5.0
    obs[133] = hands / 2.0
    obs[134] = seats / 8.0
    obs[135] = min(1.0, wi[TURN] / 224.0)


@njit(cache=True)
def learner_hands(
    wf: np.ndarray,
    wi: np.ndarray,
    seat: int,
    hands: int,
    window: int,
    action: np.ndarray,
    counters: np.ndarray,
) -> None:
    """Lay the legal entries of ``action`` for ``seat`` at times drawn from its reaction model
    (its parameter row), as ``FlyswatParallelEnv.targets`` and ``bots.reaction_times``."""
    n = 0
    for h in range(min(hands, action.shape[0])):
        card = action[h]
        if card < 0 or card >= FLIES:
            continue
        present = False
        for k in range(wi[N_CENTRE]):
            if wi[CENTRE + k] == card:
                present = True
                break
        for j in range(n):
            if wi[OUT_CARDS + j] == card:
                present = False
        if present:
            wi[OUT_CARDS + n] = card
            n += 1
    if n == 0:
        return
    state = policy.reaction_times(wf, wi, PARAMS + policy.NP * seat, n, rng.load(wi[ST]))
    wi[ST] = rng.store(state)
    for h in range(n):
        lay(wi, seat, wi[OUT_CARDS + h], wi[OUT_MS + h], window, counters)


@njit(cache=True)
def step(
    wf: np.ndarray,
    wi: np.ndarray,
    active: np.ndarray,
    actions: np.ndarray,
    seats: int,
    hands: int,
    window: int,
    learner: int,
    helped: bool,
    rewards: np.ndarray,
    over: np.ndarray,
    obs: np.ndarray,
    masks: np.ndarray,
) -> None:
    """Step every game ``g`` with ``active[g]``: play its open round with ``actions[g]``, go on
    to the next round, and write ``rewards[g]`` (the learner's points won, less those given
    back), ``over[g]`` and the learner's ``obs[g]`` and ``masks[g]``."""
    counters = np.zeros(kernel.N_COUNTERS, dtype=np.int64)
    wrong = np.zeros(8, dtype=np.int64)
    cut = np.zeros((1, 4), dtype=np.int16)
    for g in range(wi.shape[0]):
        if not active[g]:
            continue
        row = wi[g]
        before = kernel.points(row, learner)
        if row[OVER] == 0 and row[TRIGGER] >= 0:
            for s in range(seats):
                if s == learner:
                    learner_hands(wf, row, s, hands, window, actions[g], counters)
                else:
                    bot_hands(wf, row, s, seats, hands, window, counters)
            resolve(row, counters, wrong, cut, False)
            advance(row, seats, counters)
        rewards[g] = kernel.points(row, learner) - before
        over[g] = row[OVER] != 0
        encode(row, learner, seats, hands, helped, obs[g], masks[g])


@njit(cache=True)
def start(
    wi: np.ndarray,
    g: int,
    seats: int,
    deck: np.ndarray,
    remove: int,
    first: int,
    seed: int,
    learner: int,
    hands: int,
    helped: bool,
    obs: np.ndarray,
    masks: np.ndarray,
) -> None:
    """Deal game ``g`` from ``deck`` (top first) with ``first`` to move, seed its generator,
    play up to its first round and write the learner's observation and mask."""
    row = wi[g]
    kernel.deal(row, seats, deck, remove, first)
    row[ST] = seed
    counters = np.zeros(kernel.N_COUNTERS, dtype=np.int64)
    advance(row, seats, counters)
    encode(row, learner, seats, hands, helped, obs[g], masks[g])
