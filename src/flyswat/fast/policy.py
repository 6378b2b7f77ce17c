"""The bots' policy (:func:`flyswat.bots.decide`) over flat arrays, for the compiled kernel.

Each function mirrors the one of :mod:`flyswat.bots` named in its docstring, step for step,
with the same parameters (a row of :data:`PARAM_FIELDS` per seat); only the random generator
differs (:mod:`flyswat.fast.rng`). Cards are indices of :data:`flyswat.cards.DECK`.

All the state a decision reads and writes lives in two scratch arrays, ``wf`` (floats) and
``wi`` (integers), at the offsets below, shared with the game loop of
:mod:`flyswat.fast.kernel`. Two arrays rather than ten on purpose: numba updates an atomic
reference count for each array argument of each call, and with ten that cost more than the
decision itself (measured with ``perf``).
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
NP = len(PARAM_FIELDS)

#: Layout of the float scratch array ``wf``.
KEYS = 0  # wf[0:96]: sort keys of the targets
TIMES = 96  # wf[96:98]: the hands' reaction times
GAINS = 98  # wf[98:106]: expected gains, hand h and pool rank i at GAINS + 4*h + i
PARAMS = 106  # wf[PARAMS + NP*s + j]: parameter j of seat s; after the seats, the rival model
#: Where the table of :func:`p_first` starts, for at most 8 seats and the rival.
TABLE = PARAMS + 9 * NP
#: The chances of :func:`p_first` are tabulated every ``1 / TABLE_STEPS_PER_MS`` ms up to
#: ``TABLE_MS`` and interpolated linearly (error below 1e-6; exact beyond the table).
TABLE_MS = 4000
TABLE_STEPS_PER_MS = 4
TABLE_LEN = TABLE_MS * TABLE_STEPS_PER_MS + 1
WF_SIZE = TABLE + 2 * TABLE_LEN

#: Layout of the integer scratch array ``wi``.
ST = 0  # the random generator's state (flyswat.fast.rng)
TARGETS = 1  # wi[1:97]: the target flies, best first
CHOSEN = 97  # wi[97:99]: the flies chosen, one per hand
OUT_CARDS = 99  # wi[99:101]: the planned hands' flies ...
OUT_MS = 101  # wi[101:103]: ... and times
LAPSED = 103  # 1 when the last decision was a lapse
MISJUDGED = 104  # 1 when the last decision misjudged the colour
CNT = 105  # wi[105:111]: flies in the centre per colour
CENTRE = 111  # wi[111:207]: the centre's flies, in the order placed
WI_SIZE = 207


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


@njit(cache=True)
def p_first(t: float, rank: int, others: int, hands: int, rival: np.ndarray) -> float:
    """As ``bots._p_first``: the chance that a hand at ``t`` is first on the fly ``rank``,
    the rivals' times being ``rival`` (:data:`RIVAL_FIELDS`)."""
    if rank >= hands or others <= 0:
        return 1.0
    if rank == 0:
        mu, sigma, tau = rival[0], rival[1], rival[2]
    else:
        mu = rival[0] + rival[3]
        sigma = math.hypot(rival[1], rival[4])
        tau = rival[2] + rival[5]
    chance: float = survival(t, mu, sigma, tau) ** others
    return chance


@njit(cache=True)
def setup(wf: np.ndarray, params: np.ndarray, hands: int) -> None:
    """Copy ``params`` (a row per seat, then the rival model's row) into ``wf`` and
    tabulate :func:`p_first` for ranks 0 and 1 against the rival."""
    seats = params.shape[0] - 1
    for s in range(seats + 1):
        for j in range(NP):
            wf[PARAMS + NP * s + j] = params[s, j]
    rival = params[seats]
    for rank in range(2):
        for k in range(TABLE_LEN):
            t = k / TABLE_STEPS_PER_MS
            wf[TABLE + rank * TABLE_LEN + k] = p_first(t, rank, seats - 1, hands, rival)


@njit(cache=True)
def decide(wf: np.ndarray, wi: np.ndarray, s: int, n_centre: int, hands: int, seats: int) -> int:
    """Seat ``s``'s planned hands for a round just opened, as ``bots.decide``; how many.

    Reads the centre (``wi[CENTRE:]``, ``n_centre`` flies; ``wi[CNT:]``) and the seat's
    parameters (``wf[PARAMS:]``); writes the hands to ``wi[OUT_CARDS:]`` and
    ``wi[OUT_MS:]``, times increasing, and sets ``wi[LAPSED]``, ``wi[MISJUDGED]``.
    """
    p = PARAMS + NP * s
    state = rng.load(wi[ST])
    state, u = rng.uniform(state)
    wi[LAPSED] = 1 if u < wf[p + 8] else 0
    wi[MISJUDGED] = 0
    if wi[LAPSED]:
        wi[ST] = rng.store(state)
        return 0
    state, u = rng.uniform(state)
    top = 0
    for c in range(6):
        top = max(top, wi[CNT + c])
    second = 0
    for c in range(6):
        if wi[CNT + c] < top:
            second = max(second, wi[CNT + c])
    level = top
    if u < wf[p + 7] and second > 0:
        level = second
        wi[MISJUDGED] = 1
    # Targets: flies of a believed colour, best value first, equal values in random order.
    n = 0
    for k in range(n_centre):
        card = wi[CENTRE + k]
        if wi[CNT + card // 16] == level:
            state, u = rng.uniform(state)
            key = (5 - VALUES[card % 16]) + u
            j = n
            while j > 0 and wf[KEYS + j - 1] > key:
                wf[KEYS + j] = wf[KEYS + j - 1]
                wi[TARGETS + j] = wi[TARGETS + j - 1]
                j -= 1
            wf[KEYS + j] = key
            wi[TARGETS + j] = card
            n += 1
    state, first = rng.ex_gauss(state, wf[p], wf[p + 1], wf[p + 2])
    wf[TIMES] = first
    n_times = 1
    for _ in range(1, min(hands, n)):
        state, u = rng.uniform(state)
        if u >= wf[p + 9]:
            break
        state, extra = rng.ex_gauss(state, wf[p + 3], wf[p + 4], wf[p + 5])
        wf[TIMES + n_times] = wf[TIMES + n_times - 1] + max(0.0, extra)
        n_times += 1
    n_chosen = 0
    if wf[p + 11] > 0.5:
        n_chosen = contested(wf, wi, p, n, n_times, seats - 1, hands)
    else:
        n_left = n  # wi[TARGETS:TARGETS + n_left] are the flies not yet chosen
        for _ in range(n_times):
            if n_left == 0:
                break
            i = 0
            if wf[p + 10] > 0.0:
                state, u = rng.uniform(state)
                if u < wf[p + 10]:
                    state, i = rng.below(state, n_left)
            wi[CHOSEN + n_chosen] = wi[TARGETS + i]
            n_chosen += 1
            for j in range(i, n_left - 1):
                wi[TARGETS + j] = wi[TARGETS + j + 1]
            n_left -= 1
    wi[ST] = rng.store(state)
    last = 0
    floor = int(wf[p + 6])
    for h in range(n_chosen):
        ms = max(floor, last + 1, int(np.round(wf[TIMES + h])))
        wi[OUT_CARDS + h] = wi[CHOSEN + h]
        wi[OUT_MS + h] = ms
        last = ms
    return n_chosen


@njit(cache=True)
def contested(
    wf: np.ndarray, wi: np.ndarray, p: int, n: int, n_times: int, others: int, hands: int
) -> int:
    """As ``bots._contested_choice``: the flies (one per time) of greatest expected gain.

    Reads the ``n`` targets and ``n_times`` times that :func:`decide` left in the scratch
    arrays, and the seat's parameters at ``wf[p:]``; writes the choice to ``wi[CHOSEN:]`` and
    returns how many hands to lay. The chance of being first comes from the table that
    :func:`setup` made, interpolated.
    """
    pool = min(n, hands + n_times)
    if pool == 0:
        return 0
    last = TABLE_LEN - 1
    for h in range(n_times):
        x = wf[TIMES + h] * TABLE_STEPS_PER_MS
        k = min(max(int(x), 0), last - 1)
        f = min(max(x - k, 0.0), 1.0)
        for i in range(pool):
            chance = 1.0
            if i < hands and others > 0:
                row = TABLE + i * TABLE_LEN
                chance = wf[row + k] * (1.0 - f) + wf[row + k + 1] * f
            wf[GAINS + 4 * h + i] = VALUES[wi[TARGETS + i] % 16] * chance
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
    min_gain = wf[p + 12]
    if wf[GAINS + b0] >= min_gain:
        wi[CHOSEN] = wi[TARGETS + b0]
        k = 1
        if b1 >= 0 and wf[GAINS + 4 + b1] >= min_gain:
            wi[CHOSEN + 1] = wi[TARGETS + b1]
            k = 2
    return k
