"""The bots' policy (:func:`flyswat.bots.decide`) over flat arrays, for the compiled kernel.

Each function mirrors the one of :mod:`flyswat.bots` named in its docstring, step for step,
with the same parameters (a row of :data:`PARAM_FIELDS`); only the random generator differs
(:mod:`flyswat.fast.rng`). Cards are indices of :data:`flyswat.cards.DECK`.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from flyswat.fast import rng

#: The value of fly ``i`` is ``VALUES[i % 16]`` (R2: 1,1, 2×4, 3×4, 4×4, 5,5).
VALUES = np.array([1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5], dtype=np.int64)

#: Columns of a seat's parameter row, in order (names of :class:`flyswat.bots.Level` fields).
PARAM_FIELDS = (
    "mu_ms",
    "sigma_ms",
    "tau_ms",
    "second_mu_ms",
    "second_sigma_ms",
    "second_tau_ms",
    "floor_ms",
    "misjudge",
    "lapse",
    "second_hand",
    "sloppy",
    "contest",
    "min_gain",
)
#: Columns of the rival model (the ``normal`` level's times) that ``contest`` bots assume.
RIVAL_FIELDS = PARAM_FIELDS[:6]
#: Where :func:`decide` counts its lapses and misjudged rounds in a game's counters.
LAPSES = 10
MISJUDGED = 11


@njit(cache=True)
def _phi(z: float) -> float:
    return 0.5 * math.erfc(-z / math.sqrt(2.0))


@njit(cache=True)
def survival(x: float, mu: float, sigma: float, tau: float) -> float:
    """P(X > x) for X ex-Gaussian(mu, sigma, tau), as in ``bots._ex_gauss_survival``."""
    z = (x - mu) / sigma
    if z < -8.0:
        return 1.0
    cdf = _phi(z) - math.exp(sigma * sigma / (2 * tau * tau) - (x - mu) / tau) * _phi(
        z - sigma / tau
    )
    return min(1.0, max(0.0, 1.0 - cdf))


#: Layout of the float scratch array ``wf`` that :func:`decide` works in.
SPARE = 0  # wf[0:2]: the generator's spare normal deviate (flyswat.fast.rng)
KEYS = 2  # wf[2:98]: sort keys of the targets
TIMES = 98  # wf[98:100]: the hands' reaction times
GAINS = 100  # wf[100:108]: expected gains, hand h and pool rank i at GAINS + 4*h + i
WF_SIZE = 108
#: Layout of the integer scratch array ``wi``.
TARGETS = 0  # wi[0:96]: the target flies, best first
CHOSEN = 96  # wi[96:98]: the flies chosen, one per hand
OUT_CARDS = 98  # wi[98:100]: the planned hands' flies ...
OUT_MS = 100  # wi[100:102]: ... and times
WI_SIZE = 102
#: The chances of :func:`p_first` are tabulated every ``1 / TABLE_STEPS_PER_MS`` ms up to
#: ``TABLE_MS`` and interpolated linearly (error below 1e-6; exact beyond the table).
TABLE_MS = 4000
TABLE_STEPS_PER_MS = 4


@njit(cache=True)
def p_first(t: float, rank: int, others: int, hands: int, rival: np.ndarray, r: int) -> float:
    """As ``bots._p_first``: the chance that a hand at ``t`` is first on the fly ``rank``,
    the rivals' times being row ``r`` of ``rival``."""
    if rank >= hands or others <= 0:
        return 1.0
    if rank == 0:
        mu, sigma, tau = rival[r, 0], rival[r, 1], rival[r, 2]
    else:
        mu = rival[r, 0] + rival[r, 3]
        sigma = math.hypot(rival[r, 1], rival[r, 4])
        tau = rival[r, 2] + rival[r, 5]
    return survival(t, mu, sigma, tau) ** others


@njit(cache=True)
def first_table(others: int, hands: int, params: np.ndarray) -> np.ndarray:
    """:func:`p_first` for ranks 0 and 1 on a grid of times (see :data:`TABLE_MS`)."""
    n = TABLE_MS * TABLE_STEPS_PER_MS + 1
    table = np.empty((2, n), dtype=np.float64)
    r = params.shape[0] - 1
    for rank in range(2):
        for k in range(n):
            table[rank, k] = p_first(k / TABLE_STEPS_PER_MS, rank, others, hands, params, r)
    return table


@njit(cache=True)
def p_first_fast(t: float, rank: int, table: np.ndarray, others: int, hands: int) -> float:
    """:func:`p_first` read from ``table`` (:func:`first_table`), interpolated."""
    if rank >= hands or others <= 0:
        return 1.0
    x = t * TABLE_STEPS_PER_MS
    if x < 0.0 or x >= TABLE_MS * TABLE_STEPS_PER_MS:
        return 1.0 if x < 0.0 else table[rank, TABLE_MS * TABLE_STEPS_PER_MS]
    k = int(x)
    f = x - k
    return float(table[rank, k] * (1.0 - f) + table[rank, k + 1] * f)


@njit(cache=True)
def decide(
    st: np.ndarray,
    wf: np.ndarray,
    wi: np.ndarray,
    params: np.ndarray,
    s: int,
    centre: np.ndarray,
    n_centre: int,
    cnt: np.ndarray,
    hands: int,
    counters: np.ndarray,
    table: np.ndarray,
) -> int:
    """Seat ``s``'s planned hands for a round just opened, as ``bots.decide``; how many.

    ``params`` has one row per seat and, last, the rival model that ``contest`` assumes
    (:data:`RIVAL_FIELDS`), tabulated in ``table`` (:func:`first_table`); ``cnt`` counts the
    centre's flies by colour. The hands go to
    ``wi[OUT_CARDS:]`` and ``wi[OUT_MS:]``, times increasing. Few arrays are passed, on
    purpose: numba counts references to each array argument on every call, which cost more
    than the decision itself.
    """
    seats = params.shape[0] - 1
    if rng.uniform(st) < params[s, 8]:
        counters[LAPSES] += 1
        return 0
    misjudge = rng.uniform(st) < params[s, 7]
    top = 0
    for c in range(6):
        top = max(top, cnt[c])
    second = 0
    for c in range(6):
        if cnt[c] < top:
            second = max(second, cnt[c])
    level = top
    if misjudge and second > 0:
        level = second
        counters[MISJUDGED] += 1
    # Targets: flies of a believed colour, best value first, equal values in random order.
    n = 0
    for k in range(n_centre):
        card = centre[k]
        if cnt[card // 16] == level:
            key = (5 - VALUES[card % 16]) + rng.uniform(st)
            j = n
            while j > 0 and wf[KEYS + j - 1] > key:
                wf[KEYS + j] = wf[KEYS + j - 1]
                wi[TARGETS + j] = wi[TARGETS + j - 1]
                j -= 1
            wf[KEYS + j] = key
            wi[TARGETS + j] = card
            n += 1
    wf[TIMES] = rng.ex_gauss(st, wf, params[s, 0], params[s, 1], params[s, 2])
    n_times = 1
    for _ in range(1, min(hands, n)):
        if rng.uniform(st) >= params[s, 9]:
            break
        extra = rng.ex_gauss(st, wf, params[s, 3], params[s, 4], params[s, 5])
        wf[TIMES + n_times] = wf[TIMES + n_times - 1] + max(0.0, extra)
        n_times += 1
    n_chosen = 0
    if params[s, 11] > 0.5:
        n_chosen = contested(wf, wi, params, s, n, n_times, seats - 1, hands, table)
    else:
        n_left = n  # wi[TARGETS:TARGETS + n_left] are the flies not yet chosen
        sloppy = params[s, 10]
        for _ in range(n_times):
            if n_left == 0:
                break
            i = 0
            if sloppy > 0.0 and rng.uniform(st) < sloppy:
                i = rng.below(st, n_left)
            wi[CHOSEN + n_chosen] = wi[TARGETS + i]
            n_chosen += 1
            for j in range(i, n_left - 1):
                wi[TARGETS + j] = wi[TARGETS + j + 1]
            n_left -= 1
    last = 0
    floor = int(params[s, 6])
    for h in range(n_chosen):
        ms = max(floor, last + 1, int(np.round(wf[TIMES + h])))
        wi[OUT_CARDS + h] = wi[CHOSEN + h]
        wi[OUT_MS + h] = ms
        last = ms
    return n_chosen


@njit(cache=True)
def contested(
    wf: np.ndarray,
    wi: np.ndarray,
    params: np.ndarray,
    s: int,
    n: int,
    n_times: int,
    others: int,
    hands: int,
    table: np.ndarray,
) -> int:
    """As ``bots._contested_choice``: the flies (one per time) of greatest expected gain.

    Reads the ``n`` targets and ``n_times`` times from the scratch arrays of :func:`decide`
    and writes the choice to ``wi[CHOSEN:]``; returns how many hands to lay.
    """
    pool = min(n, hands + n_times)
    if pool == 0:
        return 0
    for h in range(n_times):
        for i in range(pool):
            value = VALUES[wi[TARGETS + i] % 16]
            chance = p_first_fast(wf[TIMES + h], i, table, others, hands)
            wf[GAINS + 4 * h + i] = value * chance
    best = -1.0
    b0 = -1
    b1 = -1
    if n_times == 1 or pool == 1:
        for i in range(pool):  # permutations in lexicographic order: the first best wins
            if wf[GAINS + i] > best:
                best = wf[GAINS + i]
                b0 = i
    else:
        for i in range(pool):
            for j in range(pool):
                if i != j and wf[GAINS + i] + wf[GAINS + 4 + j] > best:
                    best = wf[GAINS + i] + wf[GAINS + 4 + j]
                    b0 = i
                    b1 = j
    k = 0
    min_gain = params[s, 12]
    if wf[GAINS + b0] >= min_gain:
        wi[CHOSEN] = wi[TARGETS + b0]
        k = 1
        if b1 >= 0 and wf[GAINS + 4 + b1] >= min_gain:
            wi[CHOSEN + 1] = wi[TARGETS + b1]
            k = 2
    return k
